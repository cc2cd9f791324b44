"""How `adjustment` tasks are drawn and scored: there is always a decoy to leave out,
and the named set is checked for backdoor validity on the hidden graph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import networkx as nx
from pydantic import BaseModel

from causal_gym.families.adjustment.contract import ADJUSTMENT_WEIGHTS, AdjustmentSubmission
from causal_gym.hooks import FamilyHooks
from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.task import HiddenTruth


def adjustment_validity(truth: HiddenTruth, names: list[str]) -> float:
    """1 iff every name is a declared pre-treatment column and the set satisfies the
    backdoor criterion on the hidden graph (latents included)."""
    if not set(names) <= set(truth.pre_treatment):
        return 0.0
    graph = nx.DiGraph()
    graph.add_nodes_from(truth.roles)
    graph.add_edges_from(truth.edges)
    return 1.0 if satisfies_backdoor(graph, truth.treatment, truth.outcome, names) else 0.0


class AdjustmentHooks(FamilyHooks):
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
