"""One registry helper for every kind of plug-in: task families, audit suites, sandbox
backends and agents.

A kind is a `Registry`: entries registered under a name, each an object or an entry
point (a `"module:attribute"` string) that is imported on first use, so listing the
names never imports what they name (`--help` answers at once; the worker side never
loads the generator). Packages of other authors add entries by installing: each
registry reads its packaging entry-point group (`causal_gym.families`,
`causal_gym.audit_suites`, `causal_gym.sandboxes`, `causal_gym.agents`) once, on
first use, after the built-in entries, in name order, so the order is the same on
every machine with the same packages. A bad lookup raises the kind's own error with
one line that names every accepted name, the way Gymnasium's `make` and inspect_ai's
registries answer.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any, Generic, TypeVar

T = TypeVar("T")
#: What an entry's name may be: a word with dots, dashes and a trailing colon (an
#: agent that takes parameters registers its prefix, "simulated:").
NAME_FORMAT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}:?")


def load_entry_point(spec: str, error: type[Exception] = ValueError) -> Any:
    """The object `"module:attribute"` names (the attribute may be dotted, like
    `Class.method`); `error` when the string is malformed or nothing is there."""
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise error(f"an entry point is 'module:attribute', got {spec!r}")
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise error(f"cannot load {spec!r}: {exc}") from exc
    return value


class Registry(Generic[T]):
    """Named entries of one kind.

    `accept(name, loaded)` turns what an entry point names into an entry (checking it,
    raising `error` otherwise); it runs once per entry, on first use.
    """

    def __init__(
        self,
        kind: str,
        plural: str,
        error: type[Exception],
        group: str | None = None,
        accept: Callable[[str, Any], T] | None = None,
    ) -> None:
        self.kind, self.plural, self.error, self.group = kind, plural, error, group
        self._accept = accept or (lambda name, loaded: loaded)
        self._specs: dict[str, T | str] = {}
        self._loaded: dict[str, T] = {}
        self._discovered = group is None

    def register(self, name: str, entry: T | str) -> None:
        """Add `entry` (an object, or an entry-point string loaded on first use)."""
        if not NAME_FORMAT.fullmatch(name):
            raise self.error(f"{self.kind} name {name!r} is not a plain name")
        if name in self._specs:
            raise self.error(f"{self.kind} {name!r} is already registered")
        self._specs[name] = entry

    def unregister(self, name: str) -> None:
        """Remove an entry (tests and notebooks that register a throwaway one)."""
        self._specs.pop(name, None)
        self._loaded.pop(name, None)

    def names(self) -> tuple[str, ...]:
        """Every registered name: the built-in ones, then installed packages' ones."""
        self._discover()
        return tuple(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def accepted(self) -> str:
        """Every name, comma-separated, for messages and `--help`."""
        return ", ".join(self.names())

    def get(self, name: str) -> T:
        """The entry named `name`; the kind's error naming the accepted ones otherwise."""
        if name in self._loaded:
            return self._loaded[name]
        self._discover()
        if name not in self._specs:
            raise self.error(
                f"unknown {self.kind} {name!r}: accepted {self.plural} are {self.accepted()}"
            )
        spec = self._specs[name]
        loaded = load_entry_point(spec, self.error) if isinstance(spec, str) else spec
        entry = self._accept(name, loaded)
        self._loaded[name] = entry
        return entry

    def values(self) -> tuple[T, ...]:
        """Every entry, in names() order, loaded: unlike names(), this imports what the
        entry points name."""
        return tuple(self.get(name) for name in self.names())

    def spec(self, name: str) -> T | str:
        """What was registered under `name`, unloaded (an entry point stays a string)."""
        self._discover()
        if name not in self._specs:
            raise self.error(
                f"unknown {self.kind} {name!r}: accepted {self.plural} are {self.accepted()}"
            )
        return self._specs[name]

    def _discover(self) -> None:
        """Read the packaging entry-point group once (installed plug-ins)."""
        if self._discovered:
            return
        self._discovered = True
        assert self.group is not None
        found = sorted(metadata.entry_points(group=self.group), key=lambda e: e.name)
        for entry in found:
            if entry.name not in self._specs:
                self.register(entry.name, entry.value)
