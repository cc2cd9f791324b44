"""`ate`: the population average treatment effect with a 90% interval, nothing else."""

from __future__ import annotations

from causal_gym.families.base import FamilySpec
from causal_gym.scoring.schemas import AteSubmission
from causal_gym.task_id import Family


class AteFamily(FamilySpec):
    name = Family.ATE
    label = "ATE"
    submission_model = AteSubmission
    eval_count = 170
    expert_eval_count = 100


SPEC = AteFamily()
