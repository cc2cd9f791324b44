"""causal-gym: procedurally generated causal-inference tasks with a calibrated reward.

Every public name loads on first use: `import causal_gym` costs almost nothing, so
the CLIs answer `--help` at once and the worker side of the orchestrator can import a
light module (say `causal_gym.task_id`) without dragging in the generator,
statsmodels or verifiers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causal_gym._lazy import lazy_exports

if TYPE_CHECKING:
    from causal_gym.errors import CausalGymError
    from causal_gym.make import generate_task
    from causal_gym.rng_keys import DEFAULT_EVAL_KEY, DerivationKey, resolve_key
    from causal_gym.task import HiddenTruth, PublicTask, Task
    from causal_gym.task_id import Family, Namespace, TaskId
    from causal_gym.vf import CausalGymEnv, CausalGymTaskset

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

# The verifiers loader finds the taskset through `__all__`; it loads verifiers only then.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_EVAL_KEY": "causal_gym.rng_keys.keys",
        "CausalGymEnv": "causal_gym.vf",
        "CausalGymError": "causal_gym.errors",
        "CausalGymTaskset": "causal_gym.vf",
        "DerivationKey": "causal_gym.rng_keys.keys",
        "Family": "causal_gym.task_id",
        "HiddenTruth": "causal_gym.task",
        "Namespace": "causal_gym.task_id",
        "PublicTask": "causal_gym.task",
        "Task": "causal_gym.task",
        "TaskId": "causal_gym.task_id",
        "generate_task": "causal_gym.make",
        "resolve_key": "causal_gym.rng_keys.keys",
    },
)
