"""`null_detect`: the ATE plus the probability that it is not exactly zero. Effect
classes come in keyed blocks of 20 (7 structural nulls, 7 hard and 6 wide non-nulls),
and the probability is scored by its Brier skill over the disclosed prior."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from causal_gym.families.base import FamilySpec
from causal_gym.scoring.schemas import AteSubmission, FiniteFloat
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.spec.plan import EffectClass
    from causal_gym.task import HiddenTruth
    from causal_gym.task_id import TaskId

#: Weights of the estimand reward and of the Brier skill in the total.
NULL_DETECT_WEIGHTS = (0.9, 0.1)
NULL_BLOCK_SIZE = 20
NULL_BLOCK_COUNTS = {"structural_null": 7, "hard_nonnull": 7, "wide_nonnull": 6}
#: Disclosed prior probability that a null_detect task has a non-zero effect.
EFFECT_PRIOR_NUMERATOR = 13
EFFECT_PRIOR = EFFECT_PRIOR_NUMERATOR / NULL_BLOCK_SIZE


class NullDetectSubmission(AteSubmission):
    """ATE answer plus a probability that the true effect is not exactly zero."""

    effect_probability: FiniteFloat = Field(
        ge=0.0, le=1.0, description="Probability in [0, 1] that the true ATE is non-zero."
    )


class NullDetectFamily(FamilySpec):
    name = Family.NULL_DETECT
    label = "Null detection"
    submission_model = NullDetectSubmission
    components = ("brier_skill",)
    eval_count = 160  # eight whole blocks of 20
    expert_eval_count = 100  # five whole blocks of 20
    extra_probes = ("prior_only",)

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        nulls = NULL_BLOCK_COUNTS["structural_null"]
        return [
            "Also give `effect_probability`, your probability that the true ATE is not exactly "
            f"zero. Prior: in this family {EFFECT_PRIOR_NUMERATOR} of every {NULL_BLOCK_SIZE} "
            f"tasks have a non-zero effect and {nulls} of {NULL_BLOCK_SIZE} have exactly none "
            f"(prior probability {EFFECT_PRIOR_NUMERATOR}/{NULL_BLOCK_SIZE})."
        ]

    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        from causal_gym.spec.plan import null_block_classes

        block, position = divmod(task_id.index, NULL_BLOCK_SIZE)
        return null_block_classes(key, task_id.namespace, block)[position]

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        from causal_gym.scoring.reward import brier_skill

        if not isinstance(submission, NullDetectSubmission):
            raise TypeError("a null_detect task needs a NullDetectSubmission")
        return {"brier_skill": brier_skill(submission.effect_probability, truth.ate != 0.0)}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        weight, skill_weight = NULL_DETECT_WEIGHTS
        return weight * estimand_reward + skill_weight * components["brier_skill"]

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "effect_probability": EFFECT_PRIOR}


SPEC = NullDetectFamily()
