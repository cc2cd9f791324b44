"""causal-gym: procedurally generated causal-inference tasks with a calibrated reward."""

from causal_gym.errors import CausalGymError
from causal_gym.generate import generate_task
from causal_gym.rng_keys import DEFAULT_EVAL_KEY, DerivationKey, resolve_key
from causal_gym.task import HiddenTruth, PublicTask, Task
from causal_gym.task_id import Family, Namespace, TaskId

__all__ = [
    "DEFAULT_EVAL_KEY",
    "CausalGymError",
    "DerivationKey",
    "Family",
    "HiddenTruth",
    "Namespace",
    "PublicTask",
    "Task",
    "TaskId",
    "generate_task",
    "resolve_key",
]
