"""How `mediation` tasks are drawn and worded: one declared mediator, no other, and
sequential ignorability on the hidden graph.

The indirect effect's prior (generator 6). Until generator 5 the indirect effect was
the treatment's weight on the mediator (0.5-1.0 in size) times the mediator's on the
outcome (0.3-0.8), either sign, as the README disclosed: a support with a gap around
zero (|indirect| >= 0.15) and sharp edges, which a posterior under that disclosure
used to beat the reference by +0.0063 a task on the hard tier, where the interval is
wide next to that structure (issue 41). From generator 6 the indirect effect itself
is drawn uniformly between -B and B, B log-uniform on INDIRECT_HALF_WIDTH, as the
total effect is on its own range: a flat density through zero, out to an edge that
falls off smoothly (it is 1/max(|x|, 0.2) - 1/0.8, up to a constant), and the
mediator's weight on the outcome is the indirect effect over the treatment's on the
mediator. The README says so; the reference stays the delta-method interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import networkx as nx
import numpy as np

from causal_gym.families.mediation.contract import (
    INDIRECT_HALF_WIDTH,
    MEDIATOR_ID,
    SMOOTH_INDIRECT_VERSION,
)
from causal_gym.generate.fresh_rows import Spread
from causal_gym.hooks import FamilyHooks, StagedExtra
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.reference.estimand_probes import SMOOTH_INDIRECT_NOTE
from causal_gym.rng_keys.derive import TaskStreams
from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample
from causal_gym.staging.mess import MessPlan
from causal_gym.staging.naming import Naming


class MediationHooks(FamilyHooks):
    declared_mediator = True
    effect_size_subject = "the true total effect"
    effect_size_detail = (
        " The indirect effect is the treatment's weight on the mediator (between 0.5 and 1.0 "
        "in size) times the mediator's weight on the outcome (between 0.3 and 0.8), each "
        "with either sign; the direct effect is the rest."
    )
    min_role_counts: ClassVar[Mapping[str, int]] = {"confounders": 2}
    # The declared mediator is the only one: another would carry part of the
    # "direct" effect through a column the README calls post-treatment.
    max_role_counts: ClassVar[Mapping[str, int]] = {"mediators": 0}

    def effect_size_note(self, declared: Mapping[str, str]) -> str:
        if declared.get("indirect_prior") != "smooth":
            return self.effect_size_detail
        low, high = INDIRECT_HALF_WIDTH
        return (
            f" {SMOOTH_INDIRECT_NOTE}, with B drawn "
            f"log-uniformly between {low:g} and {high:g}; the treatment's weight on the "
            "mediator is between 0.5 and 1.0 in size, either sign, and the mediator's weight "
            "on the outcome is the indirect effect over it; the direct effect is the rest."
        )

    def mediator_outcome_weight(
        self, rng: np.random.Generator, alpha: float, generator_version: int
    ) -> float:
        if generator_version < SMOOTH_INDIRECT_VERSION:  # the same two draws as before
            return float(rng.uniform(0.3, 0.8) * rng.choice((-1.0, 1.0)))
        low, high = INDIRECT_HALF_WIDTH
        half = math.exp(float(rng.uniform(math.log(low), math.log(high))))
        return float(rng.uniform(-half, half)) / alpha

    def stage_extra(
        self,
        scm: Scm,
        naming: Naming,
        mess_plan: MessPlan,
        plan: TaskPlan,
        streams: TaskStreams,
    ) -> StagedExtra | None:
        """No file beyond data.csv; from generator 6 the README's note on the indirect
        effect's prior (a declared fact, so the README renderer knows it)."""
        if plan.generator_version < SMOOTH_INDIRECT_VERSION:
            return StagedExtra()
        return StagedExtra(declared={"indirect_prior": "smooth"})

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        return [
            "Answer three effects, each with a 90% interval: `direct`, the natural direct "
            "effect (the effect of the treatment with the mediator held at the value it would "
            "take without treatment); `indirect`, the natural indirect effect (the effect of "
            "moving the mediator from its untreated to its treated value, treatment held "
            "fixed); and `total`, the average treatment effect. `total.estimate` must equal "
            "`direct.estimate + indirect.estimate`. The reward averages the three."
        ]

    def question(self, treatment: str, outcome: str, unit: str) -> str | None:
        return (
            f"How much of the effect of `{treatment}` on `{outcome}` passes through the "
            "mediator below? Decompose the population average effect into the natural direct "
            "and natural indirect effects."
        )

    def context_lines(self, declared: Mapping[str, str]) -> list[str]:
        return [
            f"Mediator: `{declared['mediator']}`, recorded after the treatment and before the "
            "outcome; part of the treatment's effect may pass through it."
        ]

    def assumption_lines(self) -> list[str] | None:
        return [
            "Sequential ignorability: given the observed pre-treatment columns there is no "
            "unobserved confounding of treatment and outcome, of treatment and mediator, or "
            "(given the treatment as well) of mediator and outcome.",
            "No confounder of the mediator and the outcome is itself affected by the "
            "treatment; the other post-treatment columns are not such confounders.",
            "Consistency: a unit's observed outcome and mediator are its potential ones under "
            "the treatment it actually received.",
            "Positivity: every unit had a probability strictly between 0 and 1 of receiving "
            "the intervention, given its pre-treatment covariates.",
        ]

    def estimand_values(self, scm: Scm, levels: tuple[str, ...]) -> dict[str, float]:
        alpha = next(e for e in scm.in_edges(MEDIATOR_ID) if e.parent == TREATMENT_ID).weights[0]
        into_y = scm.in_edges(OUTCOME_ID)
        delta = next((e.weights[0] for e in into_y if e.parent == MEDIATOR_ID), 0.0)
        total = scm.total_effect()
        return {"direct": total - alpha * delta, "indirect": alpha * delta, "total": total}

    def anchor_spreads(
        self,
        scm: Scm,
        naming: Naming,
        rows: Mapping[str, int],
        replicates: int,
        rng: np.random.Generator,
    ) -> dict[str, Spread] | None:
        from causal_gym.families.mediation.anchor import fresh_spreads

        return fresh_spreads(scm, naming, rows, replicates, rng)

    def task_anchors(
        self,
        scm: Scm,
        marginals: Mapping[str, Marginal],
        rng: np.random.Generator,
        rows: Mapping[str, int],
        levels: tuple[str, ...],
    ) -> dict[str, float] | None:
        """Each effect's r (anchor.py)."""
        from causal_gym.families.mediation.anchor import best_parts, effect_anchors

        parts = best_parts(scm, marginals, rng)
        return effect_anchors(scm, parts, rows["data.csv"], rng)

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        """Sequential ignorability on the hidden graph: given the treatment and the
        declared pre-treatment columns, nothing else links the mediator and the outcome
        (latent variables included)."""
        declared = {*scm.pre_treatment_ids, TREATMENT_ID}
        if not satisfies_backdoor(scm.graph, MEDIATOR_ID, OUTCOME_ID, declared):
            return ["mediator-outcome relation is confounded beyond the declared columns"]
        if nx.has_path(scm.graph, OUTCOME_ID, MEDIATOR_ID):
            return ["the mediator is caused by the outcome"]
        return []
