"""A run's summary (summary.json): the labels of the run and the aggregates of its
final records, a published file, so a typed model that holds no task id, no per-task
number and no key. Baseline tables, reports and exports read it back through the
same model (a summary written before a field existed reads with its default)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from causal_gym.versions import REWARD_VERSION, UNVERSIONED
from orchestrator.records.types import ScoredEpisode


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GroupStats(_Model):
    """A family's or a tier's final records."""

    n: int
    mean_reward: float | None
    mean_clipped_reward: float | None
    coverage: float | None
    submitted: float | None


class Percentiles(_Model):
    mean: float
    p50: float
    p90: float


class Tokens(_Model):
    prompt: int
    completion: int


class RunSummary(_Model):
    # the run's labels
    run_id: str
    agent: str
    model: str
    provider: str
    sample: str
    split: str
    sandbox: str
    tool_choice: str | None = None
    key_fingerprint: str
    config_digest: str
    #: The reward version that scored the records (1: summaries from before versions).
    reward_version: int = UNVERSIONED
    # the aggregates of its final records (attempts: of every record)
    episodes: int
    attempts: int
    mean_reward: float | None
    mean_clipped_reward: float | None
    coverage: float | None
    by_family: dict[str, GroupStats]
    by_tier: dict[str, GroupStats]
    final_status: dict[str, int]
    failures_by_class: dict[str, int]
    retry_incidence: float
    retried_tasks: int
    timing: dict[str, Percentiles]
    tokens: Tokens


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def coverage_share(record: ScoredEpisode) -> float:
    """The record's share of covering intervals (older records: its `covered` flag)."""
    return record.coverage if record.coverage is not None else float(bool(record.covered))


def _group(records: list[ScoredEpisode], key: str) -> dict[str, GroupStats]:
    out: dict[str, GroupStats] = {}
    for name in sorted({getattr(r, key) for r in records}):
        group = [r for r in records if getattr(r, key) == name]
        covered = [coverage_share(r) for r in group if r.covered is not None]
        out[name] = GroupStats(
            n=len(group),
            mean_reward=_mean([r.reward for r in group]),
            mean_clipped_reward=_mean([r.clipped_reward for r in group]),
            coverage=_mean([float(c) for c in covered]),
            submitted=_mean([float(r.submitted) for r in group]),
        )
    return out


def _timing(records: list[ScoredEpisode]) -> dict[str, Percentiles]:
    timing = {}
    for name in ("wall_s", "model_s", "tool_s", "overhead_s"):
        values = np.array([getattr(r, name) for r in records], dtype=float)
        if values.size:
            timing[name] = Percentiles(
                mean=float(values.mean()),
                p50=float(np.percentile(values, 50)),
                p90=float(np.percentile(values, 90)),
            )
    return timing


def reward_version(records: Sequence[ScoredEpisode], default: int = REWARD_VERSION) -> int:
    """The one reward version the records were scored with (`default` for none):
    rewards of two versions are different quantities, never averaged together."""
    versions = {r.reward_version for r in records}
    if len(versions) > 1:
        listed = ", ".join(str(v) for v in sorted(versions))
        raise ValueError(f"the records mix reward versions {listed}: report them apart")
    return versions.pop() if versions else default


def summarize(records: list[ScoredEpisode], labels: dict[str, Any]) -> RunSummary:
    """The summary of a run's records under its labels (run_id, agent, model, ...)."""
    final = [r for r in records if r.final]
    classes: dict[str, int] = {}
    retried_tasks = {r.task_id for r in records if not r.final}
    for r in records:
        if r.failure_class is not None:
            classes[r.failure_class.value] = classes.get(r.failure_class.value, 0) + 1
    covered = [coverage_share(r) for r in final if r.covered is not None]
    version = reward_version(records, labels.get("reward_version", REWARD_VERSION))
    return RunSummary(
        **{**labels, "reward_version": version},
        episodes=len(final),
        attempts=len(records),
        mean_reward=_mean([r.reward for r in final]),
        mean_clipped_reward=_mean([r.clipped_reward for r in final]),
        coverage=_mean(covered),
        by_family=_group(final, "family"),
        by_tier=_group(final, "tier"),
        final_status={
            s: sum(1 for r in final if str(r.status) == s)
            for s in sorted({str(r.status) for r in final})
        },
        failures_by_class=classes,
        retry_incidence=len(retried_tasks) / len(final) if final else 0.0,
        retried_tasks=len(retried_tasks),
        timing=_timing(final),
        tokens=Tokens(
            prompt=sum(r.usage.prompt_tokens for r in records),
            completion=sum(r.usage.completion_tokens for r in records),
        ),
    )
