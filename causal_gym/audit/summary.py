"""Turn audited rows into the report: per-key and pooled summaries, paired
differences for every comparison, and the checks evaluated over them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from causal_gym.audit.checks import (
    CONSISTENCY_BUDGET,
    NOMINAL_COVERAGE,
    KeyRun,
    Leakage,
    Paired,
    WidthSweep,
)
from causal_gym.audit.knowledge import leakage
from causal_gym.audit.policies import HACK_PROBES, SWEEP_LEVELS
from causal_gym.audit.report import (
    AuditReport,
    HackProbe,
    HonestSummary,
    NullNarrowProbe,
    PriorOnlyProbe,
    ThirdParty,
    consistency_checks,
    evaluate_checks,
)
from causal_gym.audit.runner import TaskAudit
from causal_gym.families.null_detect import NULL_BLOCK_SIZE
from causal_gym.generate.version import generator_version
from causal_gym.scoring.version import REWARD_VERSION
from causal_gym.task_id import EVAL_V1_FAMILIES as FAMILIES


def _sd(values: Sequence[float] | np.ndarray) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else 0.0


def paired(values: Sequence[float], baseline: Sequence[float]) -> Paired:
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


def honest_summary(rows: list[TaskAudit]) -> HonestSummary:
    covered = sum(r.covered for r in rows)
    return HonestSummary(
        **reward_fields(rows),
        **forecast_fields(rows),
        mean_clipped_reward=float(np.mean([r.clipped_reward for r in rows])),
        covered=int(covered),
        coverage=covered / len(rows),
    )


def width_sweep(rows: Sequence[Any]) -> WidthSweep:
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
    whole = per_family // NULL_BLOCK_SIZE * NULL_BLOCK_SIZE
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
    rows: Sequence[Any], failed: dict[str, list[str]], fingerprints: dict[str, str], requested: int
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
    rows: Sequence[Any],
    failed: dict[str, list[str]],
    fingerprints: dict[str, str],
    namespace: str,
    per_family: int,
    families: tuple[str, ...],
    summarize_family: Callable[[list[Any]], Any],
    probe_names: Callable[[str], Iterable[str]],
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The per-family report the estimand and expert audits share (keys, summaries,
    width sweep, probes minus honest), and the rows grouped by family."""
    groups = {f: [r for r in rows if r.family == f] for f in families}
    groups = {f: g for f, g in groups.items() if g}
    report: dict[str, Any] = {
        "namespace": namespace,
        "per_family": per_family,
        "keys": key_runs(rows, failed, fingerprints, per_family * len(families)),
        "families": {f: summarize_family(g) for f, g in groups.items()},
        "width_sweep": {f: width_sweep(g) for f, g in groups.items()},
        "hack_probes": {
            f: {
                name: paired([r.probes[name] for r in g], [r.reward for r in g])
                for name in probe_names(f)
            }
            for f, g in groups.items()
        },
    }
    return report, groups


def efficient_gaps(families: dict[str, list[TaskAudit]]) -> dict[str, Paired]:
    """Efficient OLS minus honest, per family, over the tasks that have it."""
    gaps = {}
    for family, members in families.items():
        scored = [(r.efficient_reward, r.reward) for r in members if r.efficient_reward is not None]
        if scored:
            gaps[family] = paired([e for e, _ in scored], [h for _, h in scored])
    return gaps


def null_leakage(rows: Sequence[Any]) -> dict[str, Leakage]:
    """null_detect's staged-only leakage check (rows carry `leak_features` and
    `structural_null`), when the rows hold both classes."""
    labels = [r.structural_null for r in rows]
    if not any(labels) or all(labels):
        return {}
    found = leakage("a structural null", [r.leak_features for r in rows], labels)
    return {"null_detect": found}


def summarize(
    rows: list[TaskAudit],
    failed: dict[str, list[str]],
    fingerprints: dict[str, str],
    namespace: str,
    per_family: int,
) -> AuditReport:
    labels = list(fingerprints)
    families = {f: [r for r in rows if r.family == f] for f in FAMILIES}
    families = {f: g for f, g in families.items() if g}
    pooled = families | {"overall": rows}
    groups: dict[str, list[TaskAudit]] = {}
    for family, members in families.items():
        groups[family] = members
        if len(labels) > 1:
            for label in labels:
                groups[f"{family}/{label}"] = [r for r in members if r.key == label]
    groups["overall"] = rows
    # The third-party analyst's models are linear: it is compared on the linear tiers
    # (the expert tier's own audit shows what linear models do there).
    linear = {g: [r for r in m if not r.expert] for g, m in pooled.items()}
    nulls = [r for r in rows if r.narrow_estimand is not None]
    nd = [r for r in rows if r.prior_skill is not None]
    report: dict[str, Any] = {
        "namespace": namespace,
        "per_family": per_family,
        "keys": key_runs(rows, failed, fingerprints, per_family * len(FAMILIES)),
        "honest": {name: honest_summary(g) for name, g in groups.items() if g},
        "width_sweep": {name: width_sweep(g) for name, g in pooled.items()},
        "hack_probes": {
            name: HackProbe(
                by_group={
                    g: paired([r.probes[name] for r in m], [r.reward for r in m])
                    for g, m in pooled.items()
                },
                share_of_tasks_beating_honest=float(
                    np.mean([r.probes[name] > r.reward for r in rows])
                ),
            )
            for name in HACK_PROBES
        },
        "structural_null_narrow": NullNarrowProbe(
            estimand=paired(
                [r.narrow_estimand for r in nulls],  # type: ignore[misc]
                [r.estimand_reward for r in nulls],
            ),
            honest_mean_estimand_reward=float(np.mean([r.estimand_reward for r in nulls])),
            honest_mean_reward=float(np.mean([r.reward for r in nulls])),
            narrow_mean_reward_with_oracle_probability=float(
                np.mean([r.narrow_reward for r in nulls])
            ),
        ),
        "prior_only_null": PriorOnlyProbe(
            n=len(nd),
            whole_blocks=len(labels) * (per_family // NULL_BLOCK_SIZE),
            max_abs_block_brier_skill=block_skill(nd, labels, per_family),
            honest_mean_brier_skill=float(np.mean([r.brier_skill or 0.0 for r in nd])),
            mean_reward=float(np.mean([r.prior_reward for r in nd])),
        ),
        "third_party": {
            g: ThirdParty(
                reward=paired([r.aipw_reward for r in m], [r.reward for r in m]),
                covered=int(sum(r.aipw_covered for r in m)),
                coverage=float(np.mean([r.aipw_covered for r in m])),
            )
            for g, m in linear.items()
        },
        "expert_tasks": sum(r.expert for r in rows),
        "reward_version": REWARD_VERSION,
        "generator_version": generator_version(namespace),
        "bayes_prior": {
            g: paired([r.bayes_reward for r in m], [r.reward for r in m]) for g, m in pooled.items()
        },
        "leakage": null_leakage(nd),
        "efficient_ols": efficient_gaps(families),
    }
    report["per_check_alpha"] = CONSISTENCY_BUDGET / consistency_checks(report)
    checks = evaluate_checks(report)
    report["checks"] = tuple(checks)
    report["total_false_alarm"] = float(sum(c.false_alarm for c in checks))
    return AuditReport.model_validate(report)
