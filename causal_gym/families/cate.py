"""`cate`: the effect of the treatment within each level of one declared categorical
pre-treatment column (3-5 levels), each with a 90% interval.

The hidden SCM multiplies the treatment by a per-level weight in the outcome's
equation, so each level's effect is exact: the base effect plus that level's weight.
The same backdoor contract as `ate` holds, so adjusting for the declared
pre-treatment columns within each level identifies every level's effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from causal_gym.families.base import FamilySpec, Triple
from causal_gym.scoring.schemas import Interval
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.derive import TaskStreams
    from causal_gym.scm.model import Scm
    from causal_gym.scm.sample import CleanSample
    from causal_gym.spec.plan import TaskPlan

#: Each level's clean rows must hold at least this many of each arm.
MIN_LEVEL_ARM_ROWS = 40
MAX_LEVELS = 5


class CateSubmission(BaseModel):
    """One interval per level of the effect modifier, keyed by the level's label."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    effects: dict[str, Interval] = Field(
        min_length=1,
        max_length=MAX_LEVELS,
        description="The effect within each level of the effect modifier: one entry per "
        "level listed in the README, keyed by the level exactly as data.csv writes it.",
    )


class CateFamily(FamilySpec):
    name = Family.CATE
    label = "CATE"
    submission_model = CateSubmission
    estimands = ("level",)  # placeholder: the names are the task's modifier levels
    per_level_estimands = True
    eval_count = 150
    eval_split = "eval-v2"
    reference_kit = ("analyst.py", "estimands.py")
    extra_probes = ("pooled_for_every_level", "per_level_difference_in_means")
    modifier_levels = (3, 5)
    effect_size_subject = "the effect at one level of the effect modifier"
    effect_size_detail = (
        " Every other level's effect differs from it by an amount drawn uniformly between "
        "0.2 and 0.8, with either sign."
    )
    rows_factor = 3.0
    min_role_counts: ClassVar[Mapping[str, int]] = {"confounders": 2}

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        return [
            "Answer `effects`: for every level of the effect modifier, the average effect of "
            "the treatment among the units at that level, E[Y(1) - Y(0) | modifier = level], "
            "with its own 90% interval. Key each entry by the level exactly as written in "
            "data.csv; every level must appear once. Each level's reward is scored like an "
            "ATE and the task's reward is their average."
        ]

    def question(self, treatment: str, outcome: str, unit: str) -> str | None:
        return (
            f"How does the effect of `{treatment}` on `{outcome}` differ across the levels of "
            f"the effect modifier below? For each level, estimate the average treatment effect "
            f"among the {unit}s at that level (a conditional average treatment effect): the mean "
            f"of `{outcome}` if all of them had the intervention minus its mean if none had."
        )

    def context_lines(self, declared: Mapping[str, str]) -> list[str]:
        return [
            f"Effect modifier: `{declared['modifier']}` (a pre-treatment column). The effect of "
            "the treatment may differ between its levels; estimate it within each level."
        ]

    def estimand_values(self, scm: Scm, levels: tuple[str, ...]) -> dict[str, float]:
        return dict(zip(levels, scm.level_effects(), strict=True))

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        import numpy as np

        from causal_gym.scm.model import TREATMENT_ID

        assert scm.modifier is not None
        codes = sample.columns[scm.modifier]
        treated = sample.columns[TREATMENT_ID] == 1
        for level in range(len(scm.interaction)):
            here = codes == level
            if min(int(np.sum(here & treated)), int(np.sum(here & ~treated))) < MIN_LEVEL_ARM_ROWS:
                return [f"a modifier level has fewer than {MIN_LEVEL_ARM_ROWS} rows in an arm"]
        return []

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        if not isinstance(submission, CateSubmission):
            raise TypeError("a cate task needs a CateSubmission")
        return {level: entry.triple() for level, entry in submission.effects.items()}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        interval = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
        return {"effects": {name: interval for name in estimands or self.estimands}}


SPEC = CateFamily()
