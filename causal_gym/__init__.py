"""causal-gym: procedurally generated causal-inference tasks with a calibrated reward."""

from causal_gym.errors import CausalGymError
from causal_gym.generate import generate_task
from causal_gym.rng_keys import DEFAULT_EVAL_KEY, DerivationKey, resolve_key
from causal_gym.task import HiddenTruth, PublicTask, Task
from causal_gym.task_id import Family, Namespace, TaskId

__all__ = [
    "DEFAULT_EVAL_KEY",
    "CausalGymEnv",
    "CausalGymError",
    "CausalGymTaskset",
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


def __getattr__(name: str) -> object:
    """The verifiers taskset and env load lazily so plain `import causal_gym` never
    imports verifiers (the loader finds them through `__all__`)."""
    if name in ("CausalGymTaskset", "CausalGymEnv"):
        from causal_gym import vf

        return getattr(vf, name)
    raise AttributeError(f"module 'causal_gym' has no attribute {name!r}")
