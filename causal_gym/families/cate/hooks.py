"""How `cate` tasks are drawn and worded: a declared categorical modifier with 3-5
levels, each level's effect the base effect plus its own interaction, and enough rows
of both arms in every level."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from causal_gym.generate.fresh_rows import Spread
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.rng_keys.derive import TaskStreams
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample
from causal_gym.staging.naming import Naming

#: Each level's clean rows must hold at least this many of each arm.
MIN_LEVEL_ARM_ROWS = 40


class CateHooks(FamilyHooks):
    modifier_levels = (3, 5)
    rows_factor = 3.0
    min_role_counts: ClassVar[Mapping[str, int]] = {"confounders": 2}
    effect_size_subject = "the effect at one level of the effect modifier"
    effect_size_detail = (
        " Every other level's effect differs from it by an amount drawn uniformly between "
        "0.2 and 0.8, with either sign."
    )

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

    def anchor_spreads(
        self,
        scm: Scm,
        naming: Naming,
        rows: Mapping[str, int],
        replicates: int,
        rng: np.random.Generator,
    ) -> dict[str, Spread] | None:
        from causal_gym.families.cate.anchor import fresh_spreads

        return fresh_spreads(scm, naming, rows, replicates, rng)

    def task_anchors(
        self,
        scm: Scm,
        marginals: Mapping[str, Marginal],
        rng: np.random.Generator,
        rows: Mapping[str, int],
        levels: tuple[str, ...],
    ) -> dict[str, float] | None:
        """Each level's r (anchor.py)."""
        from causal_gym.families.cate.anchor import level_anchors, level_variances

        anchors = level_anchors(scm, level_variances(scm, marginals, rng), rows["data.csv"])
        return dict(zip(levels, anchors, strict=True))

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        assert scm.modifier is not None
        codes = sample.columns[scm.modifier]
        treated = sample.columns[TREATMENT_ID] == 1
        for level in range(len(scm.interaction)):
            here = codes == level
            if min(int(np.sum(here & treated)), int(np.sum(here & ~treated))) < MIN_LEVEL_ARM_ROWS:
                return [f"a modifier level has fewer than {MIN_LEVEL_ARM_ROWS} rows in an arm"]
        return []
