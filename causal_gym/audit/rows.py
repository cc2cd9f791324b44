"""What every suite's row starts with, and how an audit scores an answer.

A row is a frozen dataclass of plain floats: it crosses the fork pipe back to the
runner, where score records (sealed against pickling) and truths may not go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from causal_gym.errors import GenerationError
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.task import Task


@dataclass(frozen=True)
class TaskRow:
    key: str  # the key's label, never the key
    task_id: str
    family: str
    tier: str  # the public tier, which the audit's slices group by (audit/slices.py)
    attempts: int  # generation attempts the task reports
    reward: float  # the honest reference's
    estimand_reward: float
    width_ratio: float  # the honest interval's width over the anchor r


@dataclass(frozen=True)
class AteRow(TaskRow):
    """A one-ATE family's row (the seed and expert suites): the honest interval's
    coverage and components, the width sweep, the probes, the prior-only forecast, the
    bayes-prior probe, and the staged features the leakage check reads."""

    covered: bool
    validity: float | None
    brier_skill: float | None
    sweep_estimand: tuple[float, ...]
    sweep_covered: tuple[bool, ...]
    probes: dict[str, float]
    prior_skill: float | None
    prior_reward: float | None
    #: The bayes-prior probe's reward (what knowing the generator's effect sizes buys).
    bayes_reward: float
    #: knowledge.LEAKAGE_FEATURES of the staged files, and whether the effect is zero.
    leak_features: tuple[float, ...]
    structural_null: bool


def scored_answer(task: Task, answer: dict[str, object]) -> ScoreRecord:
    """The answer's score record; an audit answer that does not validate is a bug."""
    record = score_answer(task, answer)
    if record is None:
        raise GenerationError(f"{task.public.task_id}: an audit answer did not validate")
    return record


def row_start(task: Task, key_label: str, honest: ScoreRecord) -> dict[str, Any]:
    """The TaskRow fields of a task and its honest answer's score."""
    return {
        "key": key_label,
        "task_id": task.public.task_id,
        "family": task.public.family.value,
        "tier": task.public.tier.value,
        "attempts": task.public.generation_attempts,
        "reward": honest.reward,
        "estimand_reward": honest.estimand_reward,
        "width_ratio": honest.width_ratio,
    }
