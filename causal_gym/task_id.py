"""Public task ids: `<namespace>:<family>:<index>`.

The id is the only thing about a task that may be shown to anyone; everything else
is derived from it and a key. Parsing is strict so that two spellings of the same
task (`train:ate:07`, ` train:ate:7`) cannot exist and map to different data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from causal_gym.errors import TaskIdError


class Namespace(StrEnum):
    TRAIN = "train"
    EVAL_V1 = "eval-v1"
    EVAL_V2 = "eval-v2"
    EVAL_EXPERT_V1 = "eval-expert-v1"


class Family(StrEnum):
    ATE = "ate"
    ADJUSTMENT = "adjustment"
    NULL_DETECT = "null_detect"
    CATE = "cate"
    MEDIATION = "mediation"
    OBS_VS_RCT = "obs_vs_rct"


NAMESPACES: tuple[str, ...] = tuple(n.value for n in Namespace)
FAMILIES: tuple[str, ...] = tuple(f.value for f in Family)
#: The families of the frozen eval-v1 split (the seed's three) and of eval-v2 (the
#: multi-estimand ones added after it). The v1 audit and the v1 manifest cover the first.
EVAL_V1_FAMILIES: tuple[str, ...] = ("ate", "adjustment", "null_detect")
EVAL_V2_FAMILIES: tuple[str, ...] = ("cate", "mediation", "obs_vs_rct")
#: The families the expert tier serves (nonlinear SCMs, a flexible reference) and its
#: frozen split eval-expert-v1 holds.
EXPERT_FAMILIES: tuple[str, ...] = ("ate", "adjustment", "null_detect")
_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")
ID_FORMAT = "<namespace>:<family>:<index>"


@dataclass(frozen=True, order=True)
class TaskId:
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
                f"families {', '.join(FAMILIES)})"
            )
        namespace, family, index = parts
        if namespace not in NAMESPACES:
            raise TaskIdError(
                f"unknown namespace {namespace!r} in task id {text!r}: "
                f"accepted namespaces are {', '.join(NAMESPACES)}"
            )
        if family not in FAMILIES:
            raise TaskIdError(
                f"unknown family {family!r} in task id {text!r}: "
                f"accepted families are {', '.join(FAMILIES)}"
            )
        if not _INDEX.fullmatch(index):
            raise TaskIdError(
                f"bad index {index!r} in task id {text!r}: expected a non-negative "
                "decimal integer without sign or leading zeros"
            )
        return cls(Namespace(namespace), Family(family), int(index))
