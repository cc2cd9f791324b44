"""`adjustment`: the ATE plus the set of pre-treatment columns it adjusts for, scored
for backdoor validity on the hidden graph (latent variables included)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from causal_gym.families.base import FamilySpec
from causal_gym.scoring.schemas import AteSubmission
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.task import HiddenTruth

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


def adjustment_validity(truth: HiddenTruth, names: list[str]) -> float:
    """1 iff every name is a declared pre-treatment column and the set satisfies the
    backdoor criterion on the hidden graph (latents included)."""
    import networkx as nx

    from causal_gym.scm.identification import satisfies_backdoor

    if not set(names) <= set(truth.pre_treatment):
        return 0.0
    graph = nx.DiGraph()
    graph.add_nodes_from(truth.roles)
    graph.add_edges_from(truth.edges)
    return 1.0 if satisfies_backdoor(graph, truth.treatment, truth.outcome, names) else 0.0


class AdjustmentFamily(FamilySpec):
    name = Family.ADJUSTMENT
    label = "Adjustment"
    submission_model = AdjustmentSubmission
    components = ("validity",)
    eval_count = 170
    expert_eval_count = 100
    # The family is about choosing a set: there is always a decoy to leave out.
    min_role_counts: ClassVar[Mapping[str, int]] = {"decoys": 1}

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        return [
            "Also name an adjustment set: pre-treatment columns that, conditioned on, block "
            "every backdoor path between treatment and outcome. Only pre-treatment columns "
            "listed above are allowed."
        ]

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        if not isinstance(submission, AdjustmentSubmission):
            raise TypeError("an adjustment task needs an AdjustmentSubmission")
        return {"validity": adjustment_validity(truth, submission.adjustment_set)}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        weight, validity_weight = ADJUSTMENT_WEIGHTS
        return weight * estimand_reward + validity_weight * components["validity"]

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "adjustment_set": []}


SPEC = AdjustmentFamily()
