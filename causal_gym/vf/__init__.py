"""causal-gym as a native verifiers v1 taskset (imports verifiers; load lazily)."""

from causal_gym.vf.env import CausalGymEnv
from causal_gym.vf.taskset import CausalGymTaskset, CausalGymTasksetConfig

__all__ = ["CausalGymEnv", "CausalGymTaskset", "CausalGymTasksetConfig"]
