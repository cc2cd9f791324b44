"""The generation pipeline (see pipeline.py)."""

from causal_gym.generate.pipeline import MAX_ATTEMPTS, generate_task
from causal_gym.generate.solvability import Solvability, check_solvability

__all__ = ["MAX_ATTEMPTS", "Solvability", "check_solvability", "generate_task"]
