"""The expert tier audit's report: per-family honest and linear-OLS summaries, the
width sweep, the probes, and the checks evaluated over them.

Same statistics and 1% false-alarm budget as the other audits (report.py). What is
new is a second kind of demonstration: linear OLS's coverage shown below
LINEAR_COVERAGE_LIMIT with an exact one-sided binomial bound, so the report proves
the tier punishes the method that is optimal everywhere else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from causal_gym.audit import stats
from causal_gym.audit.expert_audit import EXPERT_PROBES, ExpertTaskAudit
from causal_gym.audit.report import (
    CONSISTENCY_BUDGET,
    DEMONSTRATION_LEVEL,
    Check,
    KeyRun,
    Model,
    Paired,
    WidthSweep,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.summary import key_runs, paired, width_sweep
from causal_gym.families.null_detect import NULL_BLOCK_SIZE

LINEAR_COVERAGE_LIMIT = 0.6


class ExpertSummary(Model):
    n: int
    mean_reward: float
    sd_reward: float
    mean_estimand_reward: float
    median_reward: float
    p05_reward: float
    covered: int
    coverage: float
    #: Honest interval width over the anchor r (the efficiency bound's width): how far
    #: the flexible reference is from the best an analyst can do.
    mean_width_ratio: float
    linear_covered: int
    linear_coverage: float
    linear_mean_width_ratio: float
    mean_validity: float | None = None
    mean_brier_skill: float | None = None


class PriorBlocks(Model):
    """null_detect's disclosed prior: its largest |mean Brier skill| over any key's
    whole blocks of 20 (exactly 0 by construction)."""

    whole_blocks: int
    max_abs_block_skill: float


class ExpertAuditReport(Model):
    namespace: str
    per_family: int
    keys: tuple[KeyRun, ...]
    per_check_alpha: float
    families: dict[str, ExpertSummary]
    width_sweep: dict[str, WidthSweep]
    hack_probes: dict[str, dict[str, Paired]]  # family -> probe -> probe minus honest
    prior: PriorBlocks | None
    checks: tuple[Check, ...]
    total_false_alarm: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def expert_summary(rows: list[ExpertTaskAudit]) -> ExpertSummary:
    rewards = np.array([r.reward for r in rows])
    validity = [r.validity for r in rows if r.validity is not None]
    skills = [r.brier_skill for r in rows if r.brier_skill is not None]
    return ExpertSummary(
        n=len(rows),
        mean_reward=float(rewards.mean()),
        sd_reward=float(np.std(rewards, ddof=1)) if len(rows) > 1 else 0.0,
        mean_estimand_reward=float(np.mean([r.estimand_reward for r in rows])),
        median_reward=float(np.median(rewards)),
        p05_reward=float(np.percentile(rewards, 5)),
        covered=int(sum(r.covered for r in rows)),
        coverage=float(np.mean([r.covered for r in rows])),
        mean_width_ratio=float(np.mean([r.width_ratio for r in rows])),
        linear_covered=int(sum(r.linear_covered for r in rows)),
        linear_coverage=float(np.mean([r.linear_covered for r in rows])),
        linear_mean_width_ratio=float(np.mean([r.linear_width_ratio for r in rows])),
        mean_validity=float(np.mean(validity)) if validity else None,
        mean_brier_skill=float(np.mean(skills)) if skills else None,
    )


def prior_blocks(rows: list[ExpertTaskAudit], per_family: int) -> PriorBlocks | None:
    scored = [r for r in rows if r.prior_skill is not None]
    whole = per_family // NULL_BLOCK_SIZE * NULL_BLOCK_SIZE
    if not scored or not whole:
        return None
    worst, blocks = 0.0, 0
    for label in dict.fromkeys(r.key for r in scored):
        skills = [
            r.prior_skill or 0.0
            for r in scored
            if r.key == label and int(r.task_id.rsplit(":", 1)[1]) < whole
        ]
        worst = max(worst, abs(float(np.mean(skills))))
        blocks += whole // NULL_BLOCK_SIZE
    return PriorBlocks(whole_blocks=blocks, max_abs_block_skill=worst)


def summarize_expert(
    rows: list[ExpertTaskAudit],
    failed: dict[str, list[str]],
    fingerprints: dict[str, str],
    namespace: str,
    per_family: int,
    families: tuple[str, ...],
) -> ExpertAuditReport:
    groups = {f: [r for r in rows if r.family == f] for f in families}
    groups = {f: g for f, g in groups.items() if g}
    report: dict[str, Any] = {
        "namespace": namespace,
        "per_family": per_family,
        "keys": key_runs(rows, failed, fingerprints, per_family * len(families)),
        "families": {f: expert_summary(g) for f, g in groups.items()},
        "width_sweep": {f: width_sweep(g) for f, g in groups.items()},  # type: ignore[arg-type]
        "hack_probes": {
            f: {
                name: paired([r.probes[name] for r in g], [r.reward for r in g])
                for name in EXPERT_PROBES
            }
            for f, g in groups.items()
        },
        "prior": prior_blocks(rows, per_family),
    }
    report["per_check_alpha"] = CONSISTENCY_BUDGET / (2 * len(groups))  # coverage, sweep
    report["checks"] = tuple(evaluate_expert_checks(report))
    report["total_false_alarm"] = float(sum(c.false_alarm for c in report["checks"]))
    return ExpertAuditReport.model_validate(report)


def linear_coverage_check(family: str, s: ExpertSummary) -> Check:
    verdict = stats.share_shown_below(
        s.linear_covered, s.n, LINEAR_COVERAGE_LIMIT, DEMONSTRATION_LEVEL
    )
    return Check(
        name=f"linear OLS coverage below {LINEAR_COVERAGE_LIMIT} ({family})",
        test=f"one-sided exact binomial bound at {DEMONSTRATION_LEVEL} (demonstration)",
        passed=verdict.passed,
        detail=verdict.detail,
        false_alarm=verdict.false_alarm,
    )


def evaluate_expert_checks(report: dict[str, Any]) -> list[Check]:
    """Named checks from the report's stored statistics alone (a committed file can be
    re-checked)."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    for family, s in report["families"].items():
        checks.append(coverage_check(family, s.covered, s.n, alpha))
        checks.append(sweep_check(family, report["width_sweep"][family], alpha))
        checks.append(linear_coverage_check(family, s))
        for name, gap in report["hack_probes"][family].items():
            checks.append(below_check(f"{name} below honest ({family})", gap))
    prior: PriorBlocks | None = report["prior"]
    if prior is not None:
        checks.append(
            Check(
                name="the disclosed prior has Brier skill exactly 0 on whole blocks (null_detect)",
                test="exact",
                passed=prior.max_abs_block_skill <= 1e-9,
                detail=f"largest |mean skill| {prior.max_abs_block_skill:.1e} "
                f"over {prior.whole_blocks} blocks",
                false_alarm=0.0,
            )
        )
    checks.append(powered_check(checks))
    return checks
