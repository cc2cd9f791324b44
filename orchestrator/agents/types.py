"""What crosses the episode boundary: configs and results (pydantic), turns (frozen).

An episode result is written to results files and shipped between processes, so it
is a strict pydantic model; a turn is internal to the loop, so a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from orchestrator.agents.budgets import MAX_TURN_TOKENS, MIN_TOOL_OUTPUT_CHARS, TOOL_OUTPUT_CHARS


class EpisodeStatus(StrEnum):
    """How an episode ended; with `transient` and `timeout_cause` it decides whether a
    run retries the attempt (docs/pages/runs.md)."""

    SUBMITTED = "submitted"
    NO_SUBMISSION = "no_submission"
    TIMEOUT = "timeout"
    AGENT_ERROR = "agent_error"
    MODEL_ERROR = "model_error"
    SANDBOX_ERROR = "sandbox_error"


class EpisodeConfig(BaseModel):
    """An episode's budgets (turns, wall clock, per-tool deadline, tool output) and
    whether its result keeps the raw completions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(30, ge=1, le=1000)
    episode_timeout_s: float = Field(600.0, gt=0)
    tool_timeout_s: float = Field(120.0, gt=0)
    tool_output_chars: int = Field(TOOL_OUTPUT_CHARS, ge=MIN_TOOL_OUTPUT_CHARS)
    #: Keep each turn's raw model response (logprobs, token ids) in the result, for
    #: policy-gradient trainers; off by default (they are large).
    record_completions: bool = False


class Usage(BaseModel):
    """An episode's token counts: the sum of what its turns reported."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    total_tokens: int = Field(0, ge=0)
    reported: bool = False


class TurnReport(BaseModel):
    """What a policy says about one of its own turns, parsed before anything counts it.

    A policy (a user's class, a model server) can report anything; a count that is not
    a whole number in range makes the episode an agent_error (never a runner fault,
    which would be retried). Unknown usage keys (an OpenAI server's details) are
    ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    prompt_tokens: StrictInt = Field(0, ge=0, le=MAX_TURN_TOKENS)
    completion_tokens: StrictInt = Field(0, ge=0, le=MAX_TURN_TOKENS)
    total_tokens: StrictInt = Field(0, ge=0, le=2 * MAX_TURN_TOKENS)


#: The longest an episode can take (a day's budget plus the wind-down, with room).
MAX_EPISODE_SECONDS = 2 * 86_400.0


class EpisodeStats(BaseModel):
    """How an episode went, in numbers: what a worker reports, a run record stores and
    a stream's rollout carries (each of those models is one of these plus its own
    fields, so the list is written once)."""

    model_config = ConfigDict(extra="forbid")

    turns: int = Field(0, ge=0, le=10_000)
    invalid_attempts: int = Field(0, ge=0, le=10_000)
    model_retries: int = Field(0, ge=0, le=1_000_000)
    usage: Usage = Field(default_factory=Usage)
    wall_s: float = Field(0.0, ge=0, le=MAX_EPISODE_SECONDS)
    model_s: float = Field(0.0, ge=0, le=MAX_EPISODE_SECONDS)
    tool_s: float = Field(0.0, ge=0, le=MAX_EPISODE_SECONDS)

    def stats(self) -> dict[str, Any]:
        """These fields alone, to build another model of the family from."""
        return {name: getattr(self, name) for name in EpisodeStats.model_fields}


class EpisodeResult(EpisodeStats):
    """What a worker returns: how the episode went, never how it scored (the score
    needs the truth, which only the head holds). `handle` is the task's opaque handle."""

    handle: str
    agent: str
    status: EpisodeStatus
    submission: dict[str, Any] | None = None
    message: str | None = None
    #: For a model_error: the server kept failing in ways that may pass (a retry of
    #: the episode may succeed), rather than refusing the request.
    transient: bool = False
    #: For a timeout: whose time ran out. "agent": the deadline passed in the agent's
    #: own turns or tool calls (final, never retried); "runner": the episode loop did
    #: not come back from the sandbox or the runner (retried once).
    timeout_cause: Literal["agent", "runner"] | None = None
    #: Time from the episode's start until its sandbox was ready (0 if never needed).
    sandbox_start_s: float = 0.0
    agent_notes: str | None = None
    transcript: list[dict[str, Any]] = Field(default_factory=list)
    completions: list[dict[str, Any]] = Field(default_factory=list)


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model wrote it; the tools check its arguments, not the policy."""

    id: str
    name: str
    arguments: str  # raw JSON text, exactly as the model produced it


@dataclass(frozen=True)
class AgentTurn:
    """One reply of a policy: its text, its tool calls, what it reports of its usage and
    retries, and the raw response (kept when record_completions asks)."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: dict[str, Any] | None = None
    retries: int = 0
    raw: dict[str, Any] = field(default_factory=dict)
