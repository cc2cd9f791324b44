"""The records a run writes: one scored-episode line per finished attempt
(results.jsonl, head only), transcripts in their own file, and the small progress
note the scorer hands back to the driver.

`ScoredEpisode` is the one record of how an episode went and scored; every number a
report shows is computed from these lines. It is schema-versioned (readers refuse a
version they do not know) and sealed like the score it carries: it never leaves the
head process that writes it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from causal_gym.sealed import Sealed
from orchestrator.agents.types import EpisodeStatus, Usage

RECORD_VERSION = 1


class FailureClass(StrEnum):
    """Why an attempt did not end in a submission (or ended as a failure)."""

    SANDBOX_ERROR = "sandbox_error"
    TIMEOUT = "timeout"
    AGENT_ERROR = "agent_error"
    MODEL_ERROR = "model_error"  # deterministic: the server refused the request
    MODEL_TRANSIENT = "model_transient"  # the server kept failing (5xx, 429, network)
    NO_SUBMISSION = "no_submission"
    LOST = "lost"  # the sandbox actor died with the episode in flight
    GENERATION_ERROR = "generation_error"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScoredEpisode(Sealed, _Record):
    """One finished attempt of one task, scored on the head."""

    schema_version: Literal[1] = 1
    run_id: str
    task_id: str
    family: str
    tier: str
    attempt: int = Field(ge=0)
    final: bool
    key_fingerprint: str
    sandbox: str
    agent: str
    status: EpisodeStatus | Literal["lost", "generation_error"]
    failure_class: FailureClass | None
    retryable: bool
    message: str | None = None
    # score (reward -1 and no components without a valid submission)
    submitted: bool
    reward: float
    clipped_reward: float
    estimand_reward: float | None = None
    covered: bool | None = None
    #: Share of the task's intervals that cover (several for the multi-estimand
    #: families; absent in records written before it existed).
    coverage: float | None = None
    width_ratio: float | None = None
    validity: float | None = None
    brier_skill: float | None = None
    interval_loss: float | None = None
    abs_error: float | None = None
    narrow_penalty: float | None = None
    loss: float | None = None
    # how it went
    turns: int = 0
    invalid_attempts: int = 0
    model_retries: int = 0
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = 0.0
    model_s: float = 0.0
    tool_s: float = 0.0
    #: Dispatch to result at the driver, minus the episode's own wall time: generation,
    #: queueing and transfer (the runner's overhead for this attempt).
    overhead_s: float = 0.0
    finished_at: float = 0.0

    def line(self) -> str:
        return self.model_dump_json()


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
    schema_version: Literal[1] = 1
    run_id: str
    task_id: str
    attempt: int
    messages: list[dict[str, Any]]


def read_record(line: str) -> ScoredEpisode:
    """Parse one results.jsonl line; a line of another schema version is an error."""
    return ScoredEpisode.model_validate_json(line)
