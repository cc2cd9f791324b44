"""Run summaries for table and report tests: a RunSummary with every field a test does
not care about filled in (the model requires them all)."""

from __future__ import annotations

from typing import Any

from orchestrator.records.summary import RunSummary

DEFAULTS: dict[str, Any] = {
    "run_id": "r", "agent": "reference", "model": "m", "provider": "p",
    "sample": "eval-v1, 3 tasks", "split": "eval-v1", "sandbox": "local",
    "key_fingerprint": "f", "config_digest": "d", "episodes": 3, "attempts": 3,
    "mean_reward": 0.5, "mean_clipped_reward": 0.5, "coverage": 0.9, "by_family": {},
    "by_tier": {}, "final_status": {"submitted": 3}, "failures_by_class": {},
    "retry_incidence": 0.0, "retried_tasks": 0, "timing": {},
    "tokens": {"prompt": 0, "completion": 0},
}  # fmt: skip


def group(mean_reward: float | None) -> dict[str, Any]:
    return {"n": 1, "mean_reward": mean_reward, "mean_clipped_reward": mean_reward,
            "coverage": None, "submitted": 1.0}  # fmt: skip


def make_summary(**fields: Any) -> RunSummary:
    """`by_family` and `by_tier` may give just a mean reward per group."""
    for name in ("by_family", "by_tier"):
        if name in fields:
            fields[name] = {
                k: group(v) if isinstance(v, float) else v for k, v in fields[name].items()
            }
    return RunSummary.model_validate({**DEFAULTS, **fields})
