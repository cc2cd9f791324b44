"""The summaries every suite's report is built from: paired differences, the reward
distribution, the width sweep, the per-key materialization, the per-family frame the
estimand and expert reports share, and null_detect's prior and leakage numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE, KeyRun, Leakage, Paired, WidthSweep
from causal_gym.audit.knowledge import leakage
from causal_gym.audit.policies import SWEEP_LEVELS
from causal_gym.audit.suite import AuditRun
from causal_gym.contracts.families import contract_of
from causal_gym.versions import generator_version, reward_version


def _sd(values: Sequence[float] | np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def paired(values: Sequence[float], baseline: Sequence[float]) -> Paired:
    """The values' mean and their paired differences from the baseline (the same tasks,
    in the same order)."""
    diff = np.asarray(values) - np.asarray(baseline)
    return Paired(
        n=len(diff), mean=float(np.mean(values)), diff_mean=float(diff.mean()), diff_sd=_sd(diff)
    )


def _mean_of_present(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def reward_fields(rows: Sequence[Any]) -> dict[str, Any]:
    """The reward distribution every audit's per-family summary starts from (rows of
    any audit: they carry `reward`, `estimand_reward` and `width_ratio`)."""
    rewards = np.array([r.reward for r in rows])
    return {
        "n": len(rows),
        "mean_reward": float(rewards.mean()),
        "sd_reward": _sd(rewards),
        "mean_estimand_reward": float(np.mean([r.estimand_reward for r in rows])),
        "median_reward": float(np.median(rewards)),
        "p05_reward": float(np.percentile(rewards, 5)),
        "mean_width_ratio": float(np.mean([r.width_ratio for r in rows])),
    }


def forecast_fields(rows: Sequence[Any]) -> dict[str, Any]:
    """The families' secondary scores, where a family has them (else None)."""
    return {
        "mean_validity": _mean_of_present([r.validity for r in rows]),
        "mean_brier_skill": _mean_of_present([r.brier_skill for r in rows]),
    }


def width_sweep(rows: Sequence[Any]) -> WidthSweep:
    """Estimand reward and coverage at each sweep level, and each level's paired
    difference from the nominal 90%: the audits check that no other level pays."""
    estimand = np.array([r.sweep_estimand for r in rows])
    at_90 = estimand[:, SWEEP_LEVELS.index(NOMINAL_COVERAGE)]
    diffs = estimand - at_90[:, None]
    return WidthSweep(
        n=len(rows),
        levels=SWEEP_LEVELS,
        mean_estimand_reward=tuple(float(v) for v in estimand.mean(axis=0)),
        coverage=tuple(float(v) for v in np.array([r.sweep_covered for r in rows]).mean(axis=0)),
        diff_mean_vs_90=tuple(float(v) for v in diffs.mean(axis=0)),
        diff_sd_vs_90=tuple(_sd(diffs[:, i]) for i in range(len(SWEEP_LEVELS))),
    )


def block_skill(rows: Sequence[Any], labels: list[str], per_family: int) -> float:
    """The prior-only forecast's largest |mean Brier skill| over any key's whole blocks
    of 20 (a block holds exactly 13 effects, so the mean is 0 up to rounding)."""
    whole = (
        per_family // contract_of("null_detect").block_size * contract_of("null_detect").block_size
    )
    worst = 0.0
    for label in labels:
        skills = [
            r.prior_skill or 0.0
            for r in rows
            if r.key == label and int(r.task_id.rsplit(":", 1)[1]) < whole
        ]
        if skills:
            worst = max(worst, abs(float(np.mean(skills))))
    return worst


def key_runs(
    rows: Sequence[Any],
    failed: Mapping[str, list[str]],
    fingerprints: Mapping[str, str],
    requested: int,
) -> tuple[KeyRun, ...]:
    """Per key: what was asked, what materialized, what failed (rows carry `key` and
    `attempts`, whichever audit made them)."""
    return tuple(
        KeyRun(
            label=label,
            fingerprint=fingerprint,
            requested=requested,
            materialized=sum(r.key == label for r in rows),
            failed_ids=tuple(failed.get(label, [])),
            mean_generation_attempts=float(
                np.mean([float(r.attempts) for r in rows if r.key == label] or [0.0])
            ),
        )
        for label, fingerprint in fingerprints.items()
    )


def family_frame(
    run: AuditRun,
    summarize_family: Callable[[list[Any]], Any],
    probe_names: Callable[[str], Iterable[str]],
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The per-family numbers the estimand and expert reports share (keys, summaries,
    width sweep, probes minus honest, the bayes-prior gain), and the rows grouped by
    family."""
    groups = {f: [r for r in run.rows if r.family == f] for f in run.families}
    groups = {f: g for f, g in groups.items() if g}
    requested = run.per_family * len(run.families)
    numbers: dict[str, Any] = {
        "namespace": run.namespace,
        "per_family": run.per_family,
        "keys": key_runs(run.rows, run.failed, run.fingerprints, requested),
        "families": {f: summarize_family(g) for f, g in groups.items()},
        "width_sweep": {f: width_sweep(g) for f, g in groups.items()},
        "hack_probes": {
            f: {
                name: paired([r.probes[name] for r in g], [r.reward for r in g])
                for name in probe_names(f)
            }
            for f, g in groups.items()
        },
        "reward_version": reward_version(run.namespace),
        "generator_version": generator_version(run.namespace),
        "bayes_prior": {
            f: paired([r.bayes_reward for r in g], [r.reward for r in g]) for f, g in groups.items()
        },
    }
    return numbers, groups


def null_leakage(rows: Sequence[Any]) -> dict[str, Leakage]:
    """null_detect's staged-only leakage check (rows carry `leak_features` and
    `structural_null`), when the rows hold both classes."""
    labels = [r.structural_null for r in rows]
    if not any(labels) or all(labels):
        return {}
    found = leakage("a structural null", [r.leak_features for r in rows], labels)
    return {"null_detect": found}
