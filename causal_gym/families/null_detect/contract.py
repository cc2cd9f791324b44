"""`null_detect`: the ATE plus the probability that it is not exactly zero. Effect
classes come in keyed blocks of 20 (7 structural nulls, 7 hard and 6 wide non-nulls),
and the probability is scored by its Brier skill over the disclosed prior
(null_detect_hooks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.submissions import AteSubmission, FiniteFloat
from causal_gym.namespaces import Namespace

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


class NullDetectFamily(FamilyContract):
    name = "null_detect"
    label = "Null detection"
    submission_model = NullDetectSubmission
    components = ("brier_skill",)
    # eight whole blocks of 20 in eval-v1, five in eval-expert-v1, three in eval-real-v1
    splits: ClassVar[Mapping[Namespace, int]] = {
        Namespace.EVAL_V1: 160,
        Namespace.EVAL_EXPERT_V1: 100,
        Namespace.EVAL_REAL_V1: 60,
    }
    block_size = NULL_BLOCK_SIZE
    extra_probes = ("prior_only",)
    hooks = "causal_gym.families.null_detect.hooks:NullDetectHooks"

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "effect_probability": EFFECT_PRIOR}


CONTRACT = NullDetectFamily()
