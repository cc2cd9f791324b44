"""What a trainer exchanges with a stream (all public: no task id, no key).

Tasks travel as `TaskWire` (staged files, prompt, schema, family, an opaque handle).
A score comes back as `StreamScore`: the reward a trainer optimizes and its named
components. An episode comes back as `Rollout`: the conversation, the raw completion
of each turn (logprobs and token ids whenever the server returned them), the reward,
the policy version that produced it, and timings.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.agents.openai_policy import OpenAIPolicyConfig


class _Public(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StreamScore(_Public):
    """The reward of one submission and the components a trainer logs. The total is
    -1 for a submission that does not validate (its errors are listed)."""

    valid: bool
    errors: tuple[str, ...] = ()
    reward: float
    clipped_reward: float
    estimand_reward: float | None = None
    covered: bool | None = None
    coverage: float | None = None  # share of the task's intervals that cover
    width_ratio: float | None = None
    validity: float | None = None
    brier_skill: float | None = None


class EpisodeSettings(_Public):
    """Episode mode: where the trainer serves its policy and how to sample from it."""

    endpoint: OpenAIPolicyConfig
    policy_version: int = Field(0, ge=0)
    batch_size: int = Field(8, ge=1, le=10_000)
    #: In-flight plus buffered episodes never exceed buffer_factor x batch_size.
    buffer_factor: float = Field(2.0, ge=1.0, le=100.0)
    max_turns: int = Field(30, ge=1, le=1000)
    episode_timeout_s: float = Field(600.0, gt=0, le=86_400)

    @property
    def bound(self) -> int:
        return max(1, int(self.buffer_factor * self.batch_size))


class Rollout(_Public):
    """One scored episode for a policy-gradient trainer."""

    handle: str
    family: str
    policy_version: int
    status: str
    reward: float
    components: dict[str, float | bool | None]
    messages: list[dict[str, Any]]
    completions: list[dict[str, Any]]
    turns: int
    wall_s: float
    model_s: float
    tool_s: float


class StreamStats(_Public):
    name: str
    key_fingerprint: str
    tasks_issued: int
    tasks_scored: int
    handles_outstanding: int
    handles_expired: int
    episodes_running: int
    episodes_buffered: int
    episodes_delivered: int
    episodes_stale: int
    episode_bound: int
    policy_version: int
    producing: bool
