"""`cate`: the effect of the treatment within each level of one declared categorical
pre-treatment column (3-5 levels), each with a 90% interval.

The hidden SCM multiplies the treatment by a per-level weight in the outcome's
equation, so each level's effect is exact: the base effect plus that level's weight.
The same backdoor contract as `ate` holds, so adjusting for the declared
pre-treatment columns within each level identifies every level's effect
(cate_hooks.py draws and words it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from causal_gym.contracts.contract import FamilyContract, Triple
from causal_gym.contracts.submissions import Interval
from causal_gym.namespaces import Namespace

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


class CateFamily(FamilyContract):
    name = "cate"
    label = "CATE"
    submission_model = CateSubmission
    estimands = ("level",)  # placeholder: the names are the task's modifier levels
    per_level_estimands = True
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V2: 150}
    reference_kit = ("analyst.py", "estimands.py", "answer.py")
    extra_probes = ("pooled_for_every_level", "per_level_difference_in_means")
    hooks = "causal_gym.families.cate.hooks:CateHooks"

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        if not isinstance(submission, CateSubmission):
            raise TypeError("a cate task needs a CateSubmission")
        return {level: entry.triple() for level, entry in submission.effects.items()}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        interval = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
        return {"effects": {name: interval for name in estimands or self.estimands}}


CONTRACT = CateFamily()
