"""The multi-estimand audit's report: per-family summaries, per-estimand coverage,
the width sweep, the probes, and the checks evaluated over them.

Same statistics and the same 1% false-alarm budget as the seed audit (report.py):
consistency checks split CONSISTENCY_BUDGET by Bonferroni; demonstrations (a probe
below honest, the honest forecast above the prior) must be significant at
DEMONSTRATION_LEVEL; the file keeps every check's sufficient statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from causal_gym.audit.estimand_audit import EstimandTaskAudit, probe_names, tested_estimands
from causal_gym.audit.report import (
    CONSISTENCY_BUDGET,
    Check,
    KeyRun,
    Model,
    Paired,
    WidthSweep,
    band_check,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.summary import family_frame, paired, reward_fields


class EstimandCoverage(Model):
    n: int
    covered: int
    coverage: float


class FamilySummary(Model):
    n: int
    mean_reward: float
    sd_reward: float
    mean_estimand_reward: float
    median_reward: float
    p05_reward: float
    mean_width_ratio: float
    #: Tested estimands (cate: "first_level"); "all_estimands" pools every interval
    #: of every task (descriptive: a task's intervals are not independent).
    coverage: dict[str, EstimandCoverage]
    mean_brier_skill: float | None = None
    mean_prior_brier_skill: float | None = None


class Forecast(Model):
    """A family's probability (obs_vs_rct): the disclosed prior's Brier skill paired
    with the honest forecast's, and the prior's largest |skill| on any task."""

    prior_minus_honest: Paired
    max_abs_prior_skill: float


class EstimandAuditReport(Model):
    namespace: str
    per_family: int
    keys: tuple[KeyRun, ...]
    per_check_alpha: float
    families: dict[str, FamilySummary]
    width_sweep: dict[str, WidthSweep]
    hack_probes: dict[str, dict[str, Paired]]  # family -> probe -> probe minus honest
    forecasts: dict[str, Forecast]  # families that ask for a probability
    checks: tuple[Check, ...]
    total_false_alarm: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def _coverage(flags: Sequence[bool]) -> EstimandCoverage:
    return EstimandCoverage(n=len(flags), covered=int(sum(flags)), coverage=float(np.mean(flags)))


def family_summary(rows: list[EstimandTaskAudit]) -> FamilySummary:
    coverage = {name: _coverage([r.covered[name] for r in rows]) for name in rows[0].covered}
    levels, hit = sum(r.levels for r in rows), sum(r.levels_covered for r in rows)
    coverage["all_estimands"] = EstimandCoverage(n=levels, covered=hit, coverage=hit / levels)
    skills = [r.brier_skill for r in rows if r.brier_skill is not None]
    prior = [r.prior_skill for r in rows if r.prior_skill is not None]
    return FamilySummary(
        **reward_fields(rows),
        coverage=coverage,
        mean_brier_skill=float(np.mean(skills)) if skills else None,
        mean_prior_brier_skill=float(np.mean(prior)) if prior else None,
    )


def summarize_estimands(
    rows: list[EstimandTaskAudit],
    failed: dict[str, list[str]],
    fingerprints: dict[str, str],
    namespace: str,
    per_family: int,
    families: tuple[str, ...],
) -> EstimandAuditReport:
    report, groups = family_frame(
        rows, failed, fingerprints, namespace, per_family, families, family_summary,
        probe_names,
    )  # fmt: skip
    report["forecasts"] = {
        f: forecast(g) for f, g in groups.items() if any(r.prior_skill is not None for r in g)
    }
    consistency = sum(len(tested_estimands(f)) + 2 for f in groups)  # coverage, band, sweep
    report["per_check_alpha"] = CONSISTENCY_BUDGET / consistency
    report["checks"] = tuple(evaluate_estimand_checks(report))
    report["total_false_alarm"] = float(sum(c.false_alarm for c in report["checks"]))
    return EstimandAuditReport.model_validate(report)


def forecast(rows: list[EstimandTaskAudit]) -> Forecast:
    scored = [r for r in rows if r.prior_skill is not None and r.brier_skill is not None]
    return Forecast(
        prior_minus_honest=paired(
            [r.prior_skill for r in scored],  # type: ignore[misc]
            [r.brier_skill for r in scored],  # type: ignore[misc]
        ),
        max_abs_prior_skill=max(abs(r.prior_skill) for r in scored),  # type: ignore[arg-type]
    )


def evaluate_estimand_checks(report: dict[str, Any]) -> list[Check]:
    """Named checks over a report under construction (a plain dict of the models),
    from its stored statistics alone, so a committed file can be re-checked."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    for family, s in report["families"].items():
        for name in tested_estimands(family):
            c = s.coverage[name]
            checks.append(coverage_check(f"{family} {name}", c.covered, c.n, alpha))
        checks.append(band_check(family, s.mean_reward, s.sd_reward, s.n, alpha))
        checks.append(sweep_check(family, report["width_sweep"][family], alpha))
        for name, gap in report["hack_probes"][family].items():
            checks.append(below_check(f"{name} below honest ({family})", gap))
        if family in report["forecasts"]:
            f = report["forecasts"][family]
            checks.append(
                below_check(
                    f"the prior-only forecast's Brier skill below honest ({family})",
                    f.prior_minus_honest,
                )
            )
            checks.append(
                Check(
                    name=f"the disclosed prior has Brier skill exactly 0 ({family})",
                    test="exact",
                    passed=f.max_abs_prior_skill <= 1e-9,
                    detail=f"largest |skill| {f.max_abs_prior_skill:.1e}",
                    false_alarm=0.0,
                )
            )
    checks.append(powered_check(checks))
    return checks
