"""`mediation`: the natural direct and indirect effects of the treatment through one
declared mediator, and the total effect, which must be their sum.

The hidden SCM is linear with no treatment-mediator interaction, so the natural
indirect effect is exactly the product of the treatment->mediator and
mediator->outcome weights and the natural direct effect is the rest of the total.
The mediator's other causes are declared pre-treatment columns, which is what the
README's sequential-ignorability contract promises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.families.base import FamilySpec, Triple
from causal_gym.scoring.schemas import Interval
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.derive import TaskStreams
    from causal_gym.scm.model import Scm
    from causal_gym.scm.sample import CleanSample
    from causal_gym.spec.plan import TaskPlan

#: `total.estimate` may differ from direct + indirect by this share of their size
#: (floating-point rounding of a sum written out in decimal).
SUM_TOLERANCE = 1e-6
MEDIATOR_ID = "k1"


class MediationSubmission(BaseModel):
    """The natural direct, natural indirect and total effects, each with an interval."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    direct: Interval = Field(description="Natural direct effect (not through the mediator).")
    indirect: Interval = Field(description="Natural indirect effect (through the mediator).")
    total: Interval = Field(
        description="Total effect; its estimate must equal direct + indirect estimates."
    )

    @model_validator(mode="after")
    def _total_is_the_sum(self) -> MediationSubmission:
        parts = self.direct.estimate + self.indirect.estimate
        allowed = SUM_TOLERANCE * max(1.0, abs(parts), abs(self.total.estimate))
        if not math.isclose(self.total.estimate, parts, rel_tol=0.0, abs_tol=allowed):
            raise ValueError(
                f"total.estimate ({self.total.estimate!r}) must equal direct.estimate + "
                f"indirect.estimate ({parts!r})"
            )
        return self


class MediationFamily(FamilySpec):
    name = Family.MEDIATION
    label = "Mediation"
    submission_model = MediationSubmission
    estimands = ("direct", "indirect", "total")
    eval_count = 150
    eval_split = "eval-v2"
    reference_kit = ("analyst.py", "estimands.py")
    extra_probes = ("total_as_direct", "mediator_as_confounder")
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
        from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID

        alpha = next(e for e in scm.in_edges(MEDIATOR_ID) if e.parent == TREATMENT_ID).weights[0]
        into_y = scm.in_edges(OUTCOME_ID)
        delta = next((e.weights[0] for e in into_y if e.parent == MEDIATOR_ID), 0.0)
        total = scm.total_effect()
        return {"direct": total - alpha * delta, "indirect": alpha * delta, "total": total}

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        """Sequential ignorability on the hidden graph: given the treatment and the
        declared pre-treatment columns, nothing else links the mediator and the outcome
        (latent variables included)."""
        import networkx as nx

        from causal_gym.scm.identification import satisfies_backdoor
        from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID

        declared = {*scm.pre_treatment_ids, TREATMENT_ID}
        if not satisfies_backdoor(scm.graph, MEDIATOR_ID, OUTCOME_ID, declared):
            return ["mediator-outcome relation is confounded beyond the declared columns"]
        if nx.has_path(scm.graph, OUTCOME_ID, MEDIATOR_ID):
            return ["the mediator is caused by the outcome"]
        return []

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        if not isinstance(submission, MediationSubmission):
            raise TypeError("a mediation task needs a MediationSubmission")
        return {name: getattr(submission, name).triple() for name in self.estimands}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        interval = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
        return {name: interval for name in self.estimands}


SPEC = MediationFamily()
