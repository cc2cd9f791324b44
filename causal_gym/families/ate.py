"""`ate`: the population average treatment effect with a 90% interval, nothing else.
Its tasks are drawn, worded and scored by the default hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from causal_gym.families.contract import FamilyContract
from causal_gym.families.submissions import AteSubmission


class AteFamily(FamilyContract):
    name = "ate"
    label = "ATE"
    submission_model = AteSubmission
    splits: ClassVar[Mapping[str, int]] = {"eval-v1": 170, "eval-expert-v1": 100}
    hooks = "causal_gym.families.hooks:FamilyHooks"


CONTRACT = AteFamily()
