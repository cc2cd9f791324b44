"""What crosses a stream's HTTP API (version 1): requests, replies and errors.

Everything here is public (no task id, no key, no truth) and imports pydantic and the
task wire format only, so a trainer's client needs nothing heavier. Tasks travel as
`TaskWire` (staged files, prompt, schema, family, an opaque handle). A score comes
back as `StreamScore`: the reward a trainer optimizes and its named components. An
episode comes back as `Rollout`: the conversation, the raw completion of each turn
(logprobs and token ids whenever the server returned them), the reward, the policy
version that produced it, and timings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from causal_gym.wire import TaskWire
from orchestrator.agents.types import EpisodeStats

#: 1.2.0: scores and rollouts carry `reward_version` (additive). 1.3.0: rollouts carry
#: every episode stat (invalid_attempts, model_retries, usage) and `attempts` (additive).
#: 1.4.0: stats count rollouts begun and attempts whose node was lost; a rollout whose
#: retries ran out on lost nodes has the status `node_lost` (additive).
#: 1.5.0, for a head shared with other users: the policy version is the operator's
#: (POST /v1/operator/episodes/policy-version; the consumer route answers 403, a
#: deliberate break: one consumer moved it for all); integers in requests are strict
#: (`n: "1"` or `n: true` is a 400); a request with two Authorization headers is a 400;
#: operator routes are served on their own listener only (404 on the consumers'); a
#: consumer is counted per mint (a re-minted name starts afresh, and counters carry
#: `handles_reserved` and `revoked`); a mint may carry the consumer's own
#: `max_outstanding`; a revoked consumer's pull ends with an `unauthorized` line; the
#: stats carry `handles_reserved` and the connection counts; `api_key_file` is a bare
#: file name in the stream's endpoint-secrets folder.
API_VERSION = "1.5.0"
#: Most tasks or rollouts one pull may ask for; a group pull, most handles.
MAX_PULL = 1024
#: Most handles one task may be handed out under (a GRPO group's answers to it).
MAX_GROUP = 64
#: Largest request body the service reads (a submission is a few hundred bytes).
MAX_BODY_BYTES = 256 * 1024
#: Score fields a trainer may log beside the reward.
COMPONENTS = ("estimand_reward", "covered", "coverage", "width_ratio", "validity", "brier_skill")


@dataclass(frozen=True)
class Made:
    """A new task as the front forwards it: its handle and its TaskWire as one JSON
    line, serialized here once (the front never parses what it only passes on);
    `more`, the group's other handles when it is handed out to a group pull."""

    handle: str
    line: bytes
    more: tuple[str, ...] = ()

    @property
    def handles(self) -> tuple[str, ...]:
        """Every handle the task goes out under, its own first."""
        return (self.handle, *self.more)


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def score_components(fields: dict[str, Any]) -> dict[str, Any]:
    """The COMPONENTS a score's fields hold (None ones left out), to send beside the reward."""
    return {name: fields[name] for name in COMPONENTS if fields.get(name) is not None}


class StreamScore(_Wire):
    """The reward of one submission and the components a trainer logs. The total is
    -1 for a submission that does not validate (its errors are listed)."""

    valid: bool
    errors: tuple[str, ...] = ()
    family: str
    #: The reward version that scored it (causal_gym/versions.py).
    reward_version: int = Field(ge=1)
    reward: float
    clipped_reward: float
    estimand_reward: float | None = None
    covered: bool | None = None
    coverage: float | None = None  # share of the task's intervals that cover
    width_ratio: float | None = None
    validity: float | None = None
    brier_skill: float | None = None


class TaskGroup(_Wire):
    """One task under several handles (a group pull's line): score each handle once,
    each with its own answer. The task's own `handle` is the first."""

    handles: tuple[str, ...] = Field(min_length=1, max_length=MAX_GROUP)
    task: TaskWire


class Rollout(EpisodeStats):
    """One scored episode for a policy-gradient trainer: its numbers (the episode
    stats every record of an episode carries) and what a trainer needs. 1.3.0 adds
    invalid_attempts, model_retries and usage, and `attempts` (a rollout whose actor
    was lost is run again; this is how many runs it took). Its status is the episode's
    (`submitted`, `timeout`, ...), or `lost` / `node_lost` when every run of it lost
    its actor or its node."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    handle: str
    family: str
    policy_version: int
    status: str
    reward_version: int = Field(ge=1)
    reward: float
    clipped_reward: float
    components: dict[str, float | bool | None]
    messages: list[dict[str, Any]]
    completions: list[dict[str, Any]]
    attempts: int = Field(1, ge=1)


# --- requests -----------------------------------------------------------------------
# Numbers are strict (StrictInt, StrictFloat): JSON's "1" and true are not numbers.
class PullTasks(_Wire):
    """POST /v1/tasks/pull: how many tasks, and how many handles each."""

    n: StrictInt = Field(ge=1, le=MAX_PULL)
    #: Handles per task (n x group at most MAX_PULL): a trainer that samples several
    #: answers to one task (GRPO's group) scores each under its own handle, once.
    #: With group > 1 each line is a TaskGroup instead of a TaskWire.
    group: StrictInt = Field(1, ge=1, le=MAX_GROUP)


class Score(_Wire):
    """POST /v1/tasks/score: a handle this consumer was given and its answer, scored once."""

    handle: str = Field(min_length=1, max_length=128)
    #: The answer: a JSON object, or the raw JSON text an agent produced.
    submission: dict[str, Any] | str


class PullEpisodes(_Wire):
    """POST /v1/episodes/pull: how many rollouts, the oldest policy version accepted,
    and how long to wait for one."""

    n: StrictInt = Field(ge=1, le=MAX_PULL)
    min_policy_version: StrictInt = Field(0, ge=0)
    timeout_s: StrictFloat = Field(0.0, ge=0, le=600)


class PolicyVersion(_Wire):
    """POST /v1/operator/episodes/policy-version: the version the endpoint now serves."""

    version: StrictInt = Field(ge=0)


class MintToken(_Wire):
    """POST /v1/operator/tokens: a new consumer's name and, optionally, its own cap."""

    name: str = Field(min_length=1, max_length=64)
    #: This consumer's cap on unscored handles, under the stream's per-consumer cap
    #: (default: that cap).
    max_outstanding: StrictInt | None = Field(None, ge=1)


class ExportKey(_Wire):
    """POST /v1/operator/export-key: the absolute path on the head of the new file the
    key goes to."""

    path: str = Field(min_length=1, max_length=4096)


# --- replies ------------------------------------------------------------------------
class ConsumerCounters(_Wire):
    """What a consumer may see of the stream: its own counts and its limits."""

    name: str
    tasks_delivered: int
    tasks_scored: int
    handles_outstanding: int
    #: Handles reserved by this consumer's pulls under way (1.5.0): outstanding plus
    #: reserved never passes max_outstanding.
    handles_reserved: int = 0
    handles_expired: int
    episodes_delivered: int
    max_outstanding: int
    max_requests: int
    handle_ttl_s: float
    #: Whether this mint's token was revoked (1.5.0: a name minted again is another
    #: consumer, listed on its own).
    revoked: bool = False


class StreamStats(_Wire):
    """The operator's view: the whole stream and every consumer's counters."""

    name: str
    key_fingerprint: str
    api_version: str
    workers: int
    families: tuple[str, ...]
    tasks_generated: int
    tasks_delivered: int
    tasks_scored: int
    tasks_ready: int
    handles_outstanding: int
    #: Handles reserved by pulls under way (1.5.0), counted against the stream's cap.
    handles_reserved: int = 0
    handles_expired: int
    episodes_running: int
    episodes_buffered: int
    episodes_delivered: int
    episodes_stale: int
    #: Episode attempts run again (a lost actor, a runner timeout; 1.3.0), and the
    #: sandbox actors that died under an episode (each replaced).
    episodes_retried: int = 0
    episodes_actors_lost: int = 0
    #: Rollouts begun (1.4.0): each is running, buffered, delivered or stale, so
    #: started = running + buffered + delivered + stale at every moment; and of the
    #: attempts, those whose node was lost (each run again or reported as `node_lost`).
    episodes_started: int = 0
    episodes_nodes_lost: int = 0
    episode_bound: int
    policy_version: int
    producing: bool
    #: The consumer listener's connections (1.5.0): open now, refused by a cap, and
    #: closed for not sending a whole request in time, since the start.
    connections_open: int = 0
    connections_refused: int = 0
    connections_timed_out: int = 0
    consumers: tuple[ConsumerCounters, ...]


class Minted(_Wire):
    """The reply to a mint: the consumer's token, sent this once; the stream keeps only its hash."""

    name: str
    token: str


class Exported(_Wire):
    """The reply to a key export: the key's fingerprint and the file it went to."""

    key_fingerprint: str
    path: str


class ErrorBody(_Wire):
    """Every error reply: a code and one line naming what is accepted."""

    code: Literal[
        "unauthorized",
        "forbidden",
        "not_found",
        "bad_request",
        "too_large",
        "too_many",
        "conflict",
        "unavailable",
    ]
    message: str


class ErrorReply(_Wire):
    """The body of every error reply, and the last line of a pull that ends early."""

    error: ErrorBody
