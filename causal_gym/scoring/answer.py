"""Validate-then-score for a whole task: the one path every entry point uses (the
episode CLI, the Ray runner, the audit, the verifiers taskset, trainer streams), so
"the reward" of an episode means the same thing everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from causal_gym.scoring.reward import ScoreRecord, score_submission
from causal_gym.scoring.validate import Accepted, validate_submission
from causal_gym.sealed import Sealed
from causal_gym.task import HiddenTruth, Task
from causal_gym.versions import REWARD_VERSION, task_reward_version

#: The total recorded for an episode that ended without a valid submission.
NO_SUBMISSION_REWARD = -1.0


def score_answer(task: Task, raw: str | bytes | dict[str, Any] | None) -> ScoreRecord | None:
    """The score record, or None when there is no answer or it does not validate."""
    return score_against(task.hidden, task.public.columns, raw)


def score_against(
    truth: HiddenTruth, columns: Sequence[str], raw: str | bytes | dict[str, Any] | None
) -> ScoreRecord | None:
    """score_answer for a holder that kept only the truth and the public column names
    (a stream keeps thousands of outstanding tasks, not their staged files)."""
    if raw is None:
        return None
    checked = validate_submission(truth.family, raw, columns, tuple(truth.estimands))
    if not isinstance(checked, Accepted):
        return None
    return score_submission(truth, checked.submission)


@dataclass(frozen=True, repr=False)
class EpisodeScore(Sealed):
    """An episode's score: the scored total, or NO_SUBMISSION_REWARD without a valid
    submission. Sealed like the record it wraps. `reward_version` is the task's
    namespace's (versions.reward_version), kept for an episode with no record."""

    record: ScoreRecord | None
    reward_version: int = REWARD_VERSION

    @property
    def submitted(self) -> bool:
        """Whether a valid submission was scored."""
        return self.record is not None

    @property
    def reward(self) -> float:
        """The scored total (unbounded below), or NO_SUBMISSION_REWARD."""
        return NO_SUBMISSION_REWARD if self.record is None else self.record.reward

    @property
    def clipped_reward(self) -> float:
        """The total clipped below at -1, what a trainer is given."""
        return NO_SUBMISSION_REWARD if self.record is None else self.record.clipped_reward

    def fields(self) -> dict[str, Any]:
        """Flat score fields for a record or metrics: `submitted`, `reward`,
        `clipped_reward` and the reward version always, the score components when
        there was a submission."""
        base: dict[str, Any] = {
            "reward_version": self.reward_version,
            "submitted": self.submitted,
            "reward": self.reward,
            "clipped_reward": self.clipped_reward,
        }
        if self.record is None:
            return base
        components = {k: v for k, v in self.record.as_dict().items() if k != "family"}
        return {**components, **base}


def episode_score(task: Task, raw: str | bytes | dict[str, Any] | None) -> EpisodeScore:
    """The episode's score from its raw answer (None: no submission), as every entry
    point records it."""
    return EpisodeScore(score_answer(task, raw), task_reward_version(task.hidden.task_id))
