"""One registry helper for every plug-in kind: a bad lookup in any of them is one line
of the kind's own error naming every accepted name; entries load on first use, once;
a name is registered once; a broken entry point is named. (Installed packages' entry
points: tests/test_extending.py installs one.)"""

from __future__ import annotations

from typing import Any

import pytest

from causal_gym.audit.suite import SUITES
from causal_gym.contracts.families import FAMILIES
from causal_gym.errors import AuditSuiteError, UnknownFamilyError
from causal_gym.registries import Registry
from orchestrator.agents.registry import AGENTS
from orchestrator.errors import AgentSpecError, UnknownSandboxError
from orchestrator.sandbox.registry import SANDBOXES

KINDS: list[tuple[Registry[Any], type[Exception], str, tuple[str, ...]]] = [
    (FAMILIES, UnknownFamilyError, "family", ("ate", "obs_vs_rct")),
    (SANDBOXES, UnknownSandboxError, "sandbox", ("local", "docker")),
    (AGENTS, AgentSpecError, "agent", ("reference", "simulated:")),
    (SUITES, AuditSuiteError, "audit suite", ("seed", "expert")),
]


@pytest.mark.parametrize("registry,error,kind,some", KINDS, ids=[k[2] for k in KINDS])
def test_a_bad_lookup_is_one_line_naming_every_accepted_name(
    registry: Registry[Any], error: type[Exception], kind: str, some: tuple[str, ...]
) -> None:
    with pytest.raises(error) as caught:
        registry.get("no-such-thing")
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"unknown {kind} 'no-such-thing'")
    assert message.endswith(registry.accepted()) and all(name in message for name in some)
    assert isinstance(caught.value, ValueError | LookupError)


#: What an entry point names: `get` must hand back this very object, every time.
LOUD = object()


def test_entries_load_once_on_first_use_and_names_are_registered_once() -> None:
    registry: Registry[Any] = Registry("widget", "widgets", KeyError)
    registry.register("eager", 1)
    registry.register("lazy", f"{__name__}:LOUD")
    assert registry.names() == ("eager", "lazy")  # listing loads nothing
    assert registry.get("lazy") is LOUD and registry.get("lazy") is LOUD
    with pytest.raises(KeyError, match="already registered"):
        registry.register("eager", 2)
    with pytest.raises(KeyError, match="not a plain name"):
        registry.register("two words", 3)
    registry.register("broken", "no_such_module_anywhere:THING")
    with pytest.raises(KeyError, match="cannot load 'no_such_module_anywhere:THING'"):
        registry.get("broken")
    registry.register("malformed", "no-colon")
    with pytest.raises(KeyError, match="an entry point is 'module:attribute'"):
        registry.get("malformed")


def test_an_entry_that_is_not_its_kind_is_refused() -> None:
    def accept(name: str, loaded: Any) -> int:
        if not isinstance(loaded, int):
            raise TypeError(f"{name}: not an int")
        return loaded

    registry: Registry[int] = Registry("number", "numbers", KeyError, accept=accept)
    registry.register("seven", 7)
    registry.register("word", "builtins:str")
    assert registry.get("seven") == 7
    with pytest.raises(TypeError, match="word: not an int"):
        registry.get("word")
