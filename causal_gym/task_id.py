"""Public task ids: `<namespace>:<family>:<index>`.

The id is the only thing about a task that may be shown to anyone; everything else
is derived from it and a key. Parsing is strict so that two spellings of the same
task (`train:ate:07`, ` train:ate:7`) cannot exist and map to different data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from causal_gym.errors import TaskIdError
from causal_gym.namespaces import NAMESPACES, SPLITS, Namespace

__all__ = ["ID_FORMAT", "NAMESPACES", "SPLITS", "Family", "Namespace", "TaskId"]


class Family(str):
    """A registered family's name (contracts/families.py): a str, checked when made, so
    a family registered by a package of its own is as good as a built-in one."""

    __slots__ = ()

    def __new__(cls, value: object) -> Family:
        """The family of a registered name; UnknownFamilyError naming the accepted
        families otherwise."""
        from causal_gym.contracts.families import contract_of

        name = str(value)
        contract_of(name)  # a ValueError naming the accepted families
        return super().__new__(cls, name)

    @property
    def value(self) -> str:
        """The name as a plain str, spelled like Namespace's `.value` so the two read alike."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"Family({self.value!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )


if TYPE_CHECKING:
    #: The built-in families and each split's, derived from the registry on first use
    #: (the registry loads pydantic, which the command lines' start-up does not): a
    #: family registered later is in family_names() and TaskId.parse, not in these.
    FAMILIES: tuple[str, ...]
    EVAL_V1_FAMILIES: tuple[str, ...]
    EVAL_V2_FAMILIES: tuple[str, ...]
    #: The families with an expert tier (nonlinear SCMs, a flexible reference); its
    #: frozen split eval-expert-v1 holds them.
    EXPERT_FAMILIES: tuple[str, ...]
    #: The families with a real tier (real covariates); eval-real-v1 holds them.
    REAL_FAMILIES: tuple[str, ...]


def __getattr__(name: str) -> tuple[str, ...]:
    if name not in _DERIVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from causal_gym.contracts import families as registry

    value: tuple[str, ...] = getattr(registry, _DERIVED[name][0])(*_DERIVED[name][1:])
    globals()[name] = value
    return value


#: The lists above, by the registry function (and its argument) that derives them.
_DERIVED = {
    "FAMILIES": ("family_names",),
    "EVAL_V1_FAMILIES": ("split_families", "eval-v1"),
    "EVAL_V2_FAMILIES": ("split_families", "eval-v2"),
    "EXPERT_FAMILIES": ("expert_families",),
    "REAL_FAMILIES": ("real_families",),
}


_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")
ID_FORMAT = "<namespace>:<family>:<index>"


@dataclass(frozen=True, order=True)
class TaskId:
    """A public id, parsed strictly (TaskId.parse) so each task has exactly one; str()
    spells it `<namespace>:<family>:<index>`."""

    namespace: Namespace
    family: Family
    index: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < 10**18:
            raise TaskIdError(f"task index must be in [0, 10^18), got {self.index}")

    def __str__(self) -> str:
        return f"{self.namespace.value}:{self.family.value}:{self.index}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse a public id; the error names every accepted value."""
        if not isinstance(text, str):
            raise TaskIdError(f"task id must be a string {ID_FORMAT}, got {type(text).__name__}")
        parts = text.split(":")
        if len(parts) != 3:
            raise TaskIdError(
                f"malformed task id {text!r}: expected {ID_FORMAT}, "
                f"e.g. train:ate:0 (namespaces {', '.join(NAMESPACES)}; "
                f"families {', '.join(_family_names())})"
            )
        namespace, family, index = parts
        if namespace not in NAMESPACES:
            raise TaskIdError(
                f"unknown namespace {namespace!r} in task id {text!r}: "
                f"accepted namespaces are {', '.join(NAMESPACES)}"
            )
        if family not in _family_names():
            raise TaskIdError(
                f"unknown family {family!r} in task id {text!r}: "
                f"accepted families are {', '.join(_family_names())}"
            )
        if not _INDEX.fullmatch(index):
            raise TaskIdError(
                f"bad index {index!r} in task id {text!r}: expected a non-negative "
                "decimal integer without sign or leading zeros"
            )
        return cls(Namespace(namespace), Family(family), int(index))


def _family_names() -> tuple[str, ...]:
    from causal_gym.contracts.families import family_names

    return family_names()
