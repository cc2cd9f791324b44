"""What a run is: a validated config (TOML file, then command-line flags on top).

Unknown keys, impossible values and a split that cannot hold `n` tasks are errors
before any work starts. `identity_digest` covers what decides the results (split,
tasks, agent, sandbox, budgets, retries) and not how they are computed (concurrency,
address, actors), so a resumed run may change the latter and nothing else.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from causal_gym.contracts.families import family_names, split_families
from causal_gym.task_id import NAMESPACES, Family
from orchestrator.agents.budgets import MIN_TOOL_OUTPUT_CHARS, TOOL_OUTPUT_CHARS
from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.errors import ConfigError
from orchestrator.run.config_files import one_line, read_toml
from orchestrator.sandbox.base import SandboxLimits

__all__ = ["ConfigError", "RunConfig", "load_config", "read_toml"]

#: What a run's split may be: a frozen split, or train (every family, fresh ids).
SPLITS: tuple[str, ...] = NAMESPACES
if TYPE_CHECKING:
    SplitName = str
else:
    SplitName = Literal[SPLITS]
#: The custom resource only the head node has; head actors require a sliver of it.
HEAD_RESOURCE = "causal_gym_head"
#: Fields that change how a run is executed, not what it produces.
EXECUTION_ONLY = frozenset(
    {
        "concurrency",
        "address",
        "connect_timeout_s",
        "out",
        "generators",
        "episodes_per_actor",
        "cpus_per_episode",
        "inspect_log",
    }
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limits(_Strict):
    memory_mb: int = 2048
    pids: int = 256
    cpus: float = 1.0
    disk_mb: int = 1024
    file_mb: int = 512
    output_bytes: int = 64 * 1024

    def sandbox_limits(self) -> SandboxLimits:
        return SandboxLimits(**self.model_dump())


class Retries(_Strict):
    """Retry budget per failure class (how many times one task may be run again for
    it), and a cap over the whole run (default: 10% of the tasks, at least 10). A
    timeout is retried at most once, and only when the runner held the time
    (slots.retryable)."""

    sandbox_error: int = Field(2, ge=0)
    model_transient: int = Field(2, ge=0)
    timeout: int = Field(1, ge=0, le=1)
    lost: int = Field(3, ge=0)
    #: A lost node's episodes are the cluster's failure, not the episode's: they do not
    #: count against `total` (a node holding half the run's episodes would exhaust it).
    node_lost: int = Field(3, ge=0)
    model_error: int = Field(0, ge=0)
    agent_error: int = Field(0, ge=0)
    no_submission: int = Field(0, ge=0)
    generation_error: int = Field(0, ge=0)
    total: int | None = Field(None, ge=0)

    def budget(self, failure_class: str) -> int:
        value = getattr(self, failure_class, 0)
        return int(value) if isinstance(value, int) else 0


class RunConfig(_Strict):
    split: SplitName = "eval-v1"
    n: int | None = Field(None, ge=1)
    #: Frozen splits only: this many tasks of each family (from `start` within the
    #: family), instead of `n` tasks in manifest order (which groups families).
    per_family: int | None = Field(None, ge=1)
    start: int = Field(0, ge=0)
    #: Default: the split's families (train: every family).
    families: tuple[Family, ...] = tuple(Family(f) for f in family_names())
    agent: str = "reference"
    openai: OpenAIPolicyConfig | None = None
    #: A registered sandbox backend (orchestrator/sandbox/registry.py).
    sandbox: str = "local"
    image: str | None = None
    concurrency: int = Field(2, ge=1, le=100_000)
    cpus_per_episode: float = Field(1.0, gt=0, le=64)
    episodes_per_actor: int = Field(1, ge=1, le=10_000)
    generators: int = Field(1, ge=1, le=64)
    episode_timeout_s: float = Field(600.0, gt=0, le=86_400)
    tool_timeout_s: float = Field(120.0, gt=0, le=86_400)
    max_turns: int = Field(30, ge=1, le=1000)
    #: Characters of one tool call's output the model sees (the rest is cut, and it is
    #: told so): a model with a small context needs less than the default.
    tool_output_chars: int = Field(TOOL_OUTPUT_CHARS, ge=MIN_TOOL_OUTPUT_CHARS, le=1_000_000)
    limits: Limits = Limits()
    retries: Retries = Retries()
    address: str | None = None
    #: How long joining the cluster at `address` may take before the run gives up.
    connect_timeout_s: float = Field(30.0, gt=0, le=3600)
    out: Path = Path("runs/latest")
    #: Write an inspect_ai log of the run (export/inspect_log.py) into its folder at the end.
    inspect_log: bool = False
    #: Labels for the report's table (the agent's name otherwise).
    model_label: str | None = None
    provider_label: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _split_families(cls, data: Any) -> Any:
        """Without `families`, a frozen split runs its own families."""
        if isinstance(data, dict) and data.get("families") is None:
            split = data.get("split") or "eval-v1"
            data = {**data, "families": split_families(split) if split in SPLITS else ()}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> RunConfig:
        from orchestrator.agents.loader import check_agent_spec

        check_agent_spec(self.agent)  # an AgentSpecError is a ValueError: one line
        from orchestrator.sandbox.registry import backend

        backend(self.sandbox)  # a ValueError naming the accepted backends
        if self.agent == "openai" and self.openai is None:
            raise ValueError("agent 'openai' needs an [openai] table (base_url, model)")
        if self.split == "train" and self.n is None:
            raise ValueError("the train split is unbounded: give -n")
        if not self.families:
            raise ValueError("families is empty")
        if self.per_family is not None and (self.n is not None or self.split == "train"):
            raise ValueError("per_family is for a frozen split and replaces n: give one of them")
        held = split_families(self.split)
        outside = [f.value for f in self.families if f.value not in held]
        if outside:
            raise ValueError(
                f"families {', '.join(outside)} are not in {self.split}: it holds {', '.join(held)}"
            )
        return self

    def task_ids(self) -> list[str]:
        """The run's tasks in order; an error if the split cannot hold them."""
        if self.split == "train":
            assert self.n is not None
            ids = (
                f"train:{family.value}:{index}"
                for index in itertools.count(self.start)
                for family in self.families
            )
            return list(itertools.islice(ids, self.n))
        from causal_gym.splits.manifest import split_ids

        if self.per_family is not None:
            return self._per_family(split_ids(self.split))
        chosen = {f.value for f in self.families}
        pool = [t for t in split_ids(self.split) if t.split(":")[1] in chosen]
        available = len(pool) - self.start
        wanted = available if self.n is None else self.n
        if wanted > available or available <= 0:
            raise ConfigError(
                f"-n {wanted} is more than {self.split} holds from --start {self.start} for "
                f"families {', '.join(f.value for f in self.families)} ({max(available, 0)} tasks)"
            )
        return pool[self.start : self.start + wanted]

    def _per_family(self, ids: list[str]) -> list[str]:
        assert self.per_family is not None
        chosen = []
        for family in self.families:
            pool = [t for t in ids if t.split(":")[1] == family.value]
            if self.start + self.per_family > len(pool):
                raise ConfigError(
                    f"per_family {self.per_family} from --start {self.start} is more than "
                    f"{self.split} holds for {family.value} ({len(pool)} tasks)"
                )
            chosen += pool[self.start : self.start + self.per_family]
        return chosen

    def identity_digest(self) -> str:
        # How often a lost node's episodes run again is the cluster's business, not
        # what the run produces (and runs made before the budget existed resume).
        exclude: dict[str, Any] = {name: True for name in EXECUTION_ONLY}
        exclude["retries"] = {"node_lost"}
        # The tool-output budget came later: at its default it stays out, so a run begun
        # before it existed keeps its digest and resumes; set, it is part of the run.
        if self.tool_output_chars == TOOL_OUTPUT_CHARS:
            exclude["tool_output_chars"] = True
        settings = self.model_dump(mode="json", exclude=exclude)
        blob = json.dumps(settings, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """The config as recorded in run.json (no secrets: the API key is a variable
        name, the derivation key is never part of a config)."""
        return self.model_dump(mode="json")


def load_config(path: Path | None, overrides: dict[str, Any]) -> RunConfig:
    """The file's values (if any), then every flag that was given on top."""
    data = read_toml(path, "config") if path is not None else {}
    for name, value in overrides.items():
        if value is None:
            continue
        if isinstance(value, dict):
            data[name] = {**data.get(name, {}), **value}
        else:
            data[name] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        where = f"config {path}" if path else "run options"
        raise ConfigError(one_line(exc, where, RunConfig)) from exc
