"""Submission schemas (and, later, the reward)."""

from causal_gym.scoring.schemas import (
    INTERVAL_LEVEL,
    SUBMISSION_MODELS,
    AdjustmentSubmission,
    AteSubmission,
    NullDetectSubmission,
    submission_json_schema,
)

__all__ = [
    "INTERVAL_LEVEL",
    "SUBMISSION_MODELS",
    "AdjustmentSubmission",
    "AteSubmission",
    "NullDetectSubmission",
    "submission_json_schema",
]
