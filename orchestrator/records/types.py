"""The records a run writes: one scored-episode line per finished attempt
(results.jsonl, head only), transcripts in their own file, and the small progress
note the scorer hands back to the driver.

`ScoredEpisode` is the one record of how an episode went and scored; every number a
report shows is computed from these lines. It is schema-versioned (readers refuse a
version they do not know) and sealed like the score it carries: it never leaves the
head process that writes it. Every line carries a MAC under the run's key (mac.py)
and the MAC of the line before it (chain.py), and every number in it is
range-checked whenever a line is read back, so a line nobody's scorer wrote cannot get
into a report, and one that was deleted or moved is noticed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.sealed import Sealed
from causal_gym.versions import UNVERSIONED
from orchestrator.agents.stored_text import MAX_STORED_CHARS
from orchestrator.agents.types import (
    MAX_EPISODE_SECONDS,
    EpisodeResult,
    EpisodeStats,
    EpisodeStatus,
)

#: The status of an attempt that brought back no episode (its failure class says why).
NoResult = Literal["lost", "generation_error", "node_lost"]
#: 2: a MAC per line, the config digest, capped messages with their length.
#: 3: the MAC is under a key derived from the head's secret (not kept in the folder) and
#: each line carries the MAC of the one before it (`prev`: a hash chain).
RECORD_VERSION = 3
_MAX_SECONDS = MAX_EPISODE_SECONDS


class FailureClass(StrEnum):
    """Why an attempt did not end in a submission (or ended as a failure)."""

    SANDBOX_ERROR = "sandbox_error"
    TIMEOUT = "timeout"
    AGENT_ERROR = "agent_error"
    MODEL_ERROR = "model_error"  # deterministic: the server refused the request
    MODEL_TRANSIENT = "model_transient"  # the server kept failing (5xx, 429, network)
    NO_SUBMISSION = "no_submission"
    LOST = "lost"  # the sandbox actor died with the episode in flight
    #: The node the sandbox actor ran on died or stopped answering (a preempted or
    #: stopped worker, an OOM-killed raylet, a network partition): not the episode's doing.
    NODE_LOST = "node_lost"
    GENERATION_ERROR = "generation_error"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ScoredEpisode(Sealed, EpisodeStats):
    """One finished attempt of one task, scored on the head."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    schema_version: Literal[3] = 3
    run_id: str
    config_digest: str
    task_id: str
    family: str
    tier: str
    attempt: int = Field(ge=0, le=10_000)
    final: bool
    key_fingerprint: str
    sandbox: str
    agent: str
    status: EpisodeStatus | NoResult
    failure_class: FailureClass | None
    retryable: bool
    #: For a timeout: "agent" (its own turns or tools used the budget; final) or
    #: "runner" (the loop did not come back from the sandbox or the actor; retried once).
    timeout_cause: Literal["agent", "runner"] | None = None
    message: str | None = Field(None, max_length=MAX_STORED_CHARS + 64)
    #: The message's full length when it was longer than MAX_STORED_CHARS.
    message_chars: int | None = Field(None, ge=0)
    # score (reward -1 and no components without a valid submission)
    #: The reward version that scored it (causal_gym/versions.py); a line written before
    #: versions existed has none and was scored with version 1.
    reward_version: int = Field(UNVERSIONED, ge=1, le=1_000)
    submitted: bool
    reward: float
    clipped_reward: float
    estimand_reward: float | None = None
    covered: bool | None = None
    #: Share of the task's intervals that cover (several for the multi-estimand
    #: families; absent in records written before it existed).
    coverage: float | None = Field(None, ge=0, le=1)
    width_ratio: float | None = Field(None, ge=0)
    validity: float | None = Field(None, ge=0, le=1)
    brier_skill: float | None = Field(None, le=1)
    interval_loss: float | None = Field(None, ge=0)
    abs_error: float | None = Field(None, ge=0)
    narrow_penalty: float | None = Field(None, ge=0)
    loss: float | None = Field(None, ge=0)
    #: Score components of a family registered beyond the built-in ones (whose
    #: components, validity and brier_skill, have fields of their own above).
    components: dict[str, float] = Field(default_factory=dict, max_length=32)
    # how it went: the EpisodeStats fields, and
    #: Dispatch to result at the driver, minus the episode's own wall time: generation,
    #: queueing and transfer (the runner's overhead for this attempt).
    overhead_s: float = Field(0.0, ge=0, le=_MAX_SECONDS)
    finished_at: float = Field(0.0, ge=0)
    #: The MAC of the line written before this one (chain.GENESIS for the first).
    prev: str = ""
    #: HMAC-SHA256 of the rest of the line under the run's key (mac.py).
    mac: str = ""

    @model_validator(mode="after")
    def _score_in_range(self) -> ScoredEpisode:
        """A reward is at most 1 (a perfect answer); the clipped one is max(-1, reward);
        a record without a submission has the no-submission reward and no components."""
        clipped = max(-1.0, self.reward)
        if not (self.reward <= 1.0 + 1e-9 and abs(self.clipped_reward - clipped) <= 1e-9):
            raise ValueError(
                f"reward {self.reward!r} with clipped reward {self.clipped_reward!r} is out of "
                "range (reward <= 1, clipped = max(-1, reward))"
            )
        if self.estimand_reward is not None and self.estimand_reward > 1.0 + 1e-9:
            raise ValueError(f"estimand reward {self.estimand_reward!r} is over 1")
        if not self.submitted and (self.reward != -1.0 or self.loss is not None):
            raise ValueError("a record without a submission scores -1 and has no components")
        return self


@dataclass(frozen=True)
class Attempt:
    """One finished attempt, as the dispatcher hands it to the scorer: the task and its
    attempt number, the failure class (None: it submitted), whether it runs again (so
    this record is not the task's final one), what the worker returned (None when the
    actor died or wedged) and what the driver measured."""

    task_id: str
    attempt: int
    failure_class: FailureClass | None
    retried: bool
    result: EpisodeResult | None
    agent: str
    overhead_s: float = 0.0
    message: str | None = None


class Progress(_Record):
    """What the scorer tells the driver about a recorded attempt: enough for the live
    display and the retry decision, no score components."""

    task_id: str
    attempt: int
    final: bool
    family: str
    status: str
    failure_class: FailureClass | None
    reward: float
    covered: bool | None


class TranscriptLine(_Record):
    schema_version: Literal[2] = 2
    run_id: str
    task_id: str
    attempt: int
    messages: list[dict[str, Any]]


def read_record(line: str) -> ScoredEpisode:
    """Parse and range-check one results.jsonl line (its MAC is mac.py's business);
    a line of another schema version is an error."""
    return ScoredEpisode.model_validate_json(line)
