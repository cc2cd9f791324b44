"""What a task id commits to before any SCM is drawn: tier, row count, effect class
(the plan; generate/draw.py draws it).

These are attempt-independent so a rejected candidate is redrawn inside the same
plan (same tier, same staged size, same null/non-null class).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from causal_gym.plan.tiers import (
    EXPERT_TRAIN_SHARE,
    REAL_TRAIN_SHARE,
    TRAIN_JITTER,
    Tier,
)
from causal_gym.rng_keys.derive import derive_block_rng
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task_id import EXPERT_FAMILIES, Namespace, TaskId


class EffectClass(StrEnum):
    STANDARD = "standard"
    STRUCTURAL_NULL = "structural_null"
    HARD_NONNULL = "hard_nonnull"
    WIDE_NONNULL = "wide_nonnull"
    # obs_vs_rct: whether the observational extract has an unblocked confounder.
    CONFOUNDED = "confounded"
    UNCONFOUNDED = "unconfounded"


#: Inclusive bounds on |ATE| for each class (0 means exactly zero).
EFFECT_MAGNITUDE: dict[EffectClass, tuple[float, float]] = {
    EffectClass.STANDARD: (0.10, 1.50),
    EffectClass.STRUCTURAL_NULL: (0.0, 0.0),
    EffectClass.HARD_NONNULL: (0.05, 0.25),
    EffectClass.WIDE_NONNULL: (0.30, 1.50),
    EffectClass.CONFOUNDED: (0.10, 1.50),
    EffectClass.UNCONFOUNDED: (0.10, 1.50),
}


@dataclass(frozen=True)
class TaskPlan:
    task_id: TaskId
    tier: Tier
    base_rows: int
    staged_rows: int
    effect_class: EffectClass
    #: The generator version that draws the task (causal_gym/versions.py).
    generator_version: int
    #: The real tier's source table (causal_gym/realdata/sources.toml); None otherwise.
    source: str | None = None
    #: Nonlinear terms and the flexible reference: every expert task, and a share of
    #: the real tier's on tables that support them.
    nonlinear: bool = False

    def __post_init__(self) -> None:
        if self.staged_rows < 200:
            raise ValueError(f"{self.task_id}: {self.staged_rows} staged rows is below 200")
        if (self.tier is Tier.REAL) != (self.source is not None):
            raise ValueError(f"{self.task_id}: a real task, and only one, names its source")
        if self.tier is Tier.EXPERT and not self.nonlinear:
            raise ValueError(f"{self.task_id}: an expert task is nonlinear")


def block_classes(
    key: DerivationKey,
    namespace: Namespace,
    block: int,
    counts: Mapping[str, int],
    family: str,
) -> tuple[EffectClass, ...]:
    """The keyed order of a family's effect classes in one block of indices (the
    classes in `counts`, each as often as it says), by the family's own block stream."""
    classes = [EffectClass(name) for name, count in counts.items() for _ in range(count)]
    order = derive_block_rng(key, namespace.value, block, family).permutation(len(classes))
    return tuple(classes[i] for i in order)


def jittered_rows(base_rows: int, factor: float) -> int:
    """Train row count: base scaled by a factor in TRAIN_JITTER, never past 50% either way."""
    low, high = TRAIN_JITTER
    if not low <= factor <= high:
        raise ValueError(f"jitter factor {factor} outside {TRAIN_JITTER}")
    rows = round(base_rows * factor)
    return min(max(rows, math.ceil(base_rows * low)), math.floor(base_rows * high))


def _closed(bounds: tuple[int, int]) -> tuple[int, int]:
    return bounds[0], bounds[1] + 1


def is_expert(task_id: TaskId, draw: float) -> bool:
    """eval-expert-v1 is all expert; in train, EXPERT_TRAIN_SHARE of the expert
    families' tasks are (by the plan stream's `draw`, uniform on [0, 1))."""
    if task_id.family.value not in EXPERT_FAMILIES:
        return False
    if task_id.namespace is Namespace.EVAL_EXPERT_V1:
        return True
    return task_id.namespace is Namespace.TRAIN and draw < EXPERT_TRAIN_SHARE


#: The first generator version with a real tier, and the first with one in the design
#: families that have a real table (realdata/sources.toml's `design` entries).
REAL_TIER_VERSION = 4
DESIGN_REAL_TIER_VERSION = 5


def is_real(task_id: TaskId, draw: float, real_tier: bool) -> bool:
    """eval-real-v1 is all real; in train, REAL_TRAIN_SHARE of the tasks (by the plan
    stream's `draw`) of a family with a real tier at the task's generator version
    (`real_tier`: generate/draw.py's has_real_tier decides it) are."""
    if not real_tier:
        return False
    if task_id.namespace is Namespace.EVAL_REAL_V1:
        return True
    return task_id.namespace is Namespace.TRAIN and draw < REAL_TRAIN_SHARE
