"""Validate-then-score for a whole task: the one path every entry point uses (CLI,
audit, verifiers taskset, episode runner), so "the reward" means the same thing."""

from __future__ import annotations

from typing import Any

from causal_gym.scoring.reward import ScoreRecord, score_submission
from causal_gym.scoring.validate import Accepted, validate_submission
from causal_gym.task import Task

#: The total recorded for an episode that ended without a valid submission.
NO_SUBMISSION_REWARD = -1.0


def score_answer(task: Task, raw: str | bytes | dict[str, Any] | None) -> ScoreRecord | None:
    """The score record, or None when there is no answer or it does not validate."""
    if raw is None:
        return None
    checked = validate_submission(task.public.family, raw, task.public.columns)
    if not isinstance(checked, Accepted):
        return None
    return score_submission(task.hidden, checked.submission)
