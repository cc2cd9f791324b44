"""How `null_detect` tasks are drawn and scored: the effect class of an id comes from
its keyed block of 20, and the effect probability earns its Brier skill."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from causal_gym.families.null_detect.contract import (
    EFFECT_PRIOR,
    EFFECT_PRIOR_NUMERATOR,
    NULL_BLOCK_COUNTS,
    NULL_BLOCK_SIZE,
    NULL_DETECT_WEIGHTS,
    NullDetectSubmission,
)
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import EffectClass, block_classes
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.reward import brier_skill
from causal_gym.task import HiddenTruth
from causal_gym.task_id import Namespace, TaskId


def null_block_classes(
    key: DerivationKey, namespace: Namespace, block: int
) -> tuple[EffectClass, ...]:
    """The keyed order of the 7/7/6 effect classes in one block of 20 indices."""
    return block_classes(key, namespace, block, NULL_BLOCK_COUNTS, "null_detect")


class NullDetectHooks(FamilyHooks):
    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        nulls = NULL_BLOCK_COUNTS["structural_null"]
        return [
            "Also give `effect_probability`, your probability that the true ATE is not exactly "
            f"zero. Prior: in this family {EFFECT_PRIOR_NUMERATOR} of every {NULL_BLOCK_SIZE} "
            f"tasks have a non-zero effect and {nulls} of {NULL_BLOCK_SIZE} have exactly none "
            f"(prior probability {EFFECT_PRIOR_NUMERATOR}/{NULL_BLOCK_SIZE})."
        ]

    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        block, position = divmod(task_id.index, NULL_BLOCK_SIZE)
        return null_block_classes(key, task_id.namespace, block)[position]

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        if not isinstance(submission, NullDetectSubmission):
            raise TypeError("a null_detect task needs a NullDetectSubmission")
        has_effect = truth.ate != 0.0
        return {"brier_skill": brier_skill(submission.effect_probability, has_effect, EFFECT_PRIOR)}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        weight, skill_weight = NULL_DETECT_WEIGHTS
        return weight * estimand_reward + skill_weight * components["brier_skill"]
