"""`ate`: the population average treatment effect with a 90% interval, nothing else.
Its tasks are drawn, worded and scored by the default hooks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.submissions import AteSubmission
from causal_gym.namespaces import Namespace


class AteFamily(FamilyContract):
    name = "ate"
    label = "ATE"
    submission_model = AteSubmission
    splits: ClassVar[Mapping[Namespace, int]] = {
        Namespace.EVAL_V1: 170,
        Namespace.EVAL_EXPERT_V1: 100,
        Namespace.EVAL_REAL_V1: 50,
    }
    hooks = "causal_gym.hooks:FamilyHooks"


CONTRACT = AteFamily()
