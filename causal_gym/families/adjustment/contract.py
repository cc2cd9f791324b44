"""`adjustment`: the ATE plus the set of pre-treatment columns it adjusts for, scored
for backdoor validity on the hidden graph (latent variables included;
adjustment_hooks.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field, model_validator

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.submissions import AteSubmission
from causal_gym.namespaces import Namespace

#: Weights of the estimand reward and of validity in the total.
ADJUSTMENT_WEIGHTS = (0.7, 0.3)


class AdjustmentSubmission(AteSubmission):
    """ATE answer plus the covariates the estimate adjusts for."""

    adjustment_set: list[str] = Field(
        description="Names of pre-treatment columns that form a valid backdoor adjustment set."
    )

    @model_validator(mode="after")
    def _names_unique(self) -> AdjustmentSubmission:
        seen: set[str] = set()
        twice: set[str] = set()
        for name in self.adjustment_set:  # linear: a set, never list.count
            (twice if name in seen else seen).add(name)
        repeated = sorted(twice)
        if repeated:
            listed = ", ".join(n if n.isprintable() else ascii(n) for n in repeated)
            raise ValueError(f"adjustment_set lists columns more than once: {listed}")
        return self


class AdjustmentFamily(FamilyContract):
    name = "adjustment"
    label = "Adjustment"
    submission_model = AdjustmentSubmission
    components = ("validity",)
    splits: ClassVar[Mapping[Namespace, int]] = {
        Namespace.EVAL_V1: 170,
        Namespace.EVAL_EXPERT_V1: 100,
        Namespace.EVAL_REAL_V1: 50,
    }
    hooks = "causal_gym.families.adjustment.hooks:AdjustmentHooks"

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "adjustment_set": []}


CONTRACT = AdjustmentFamily()
