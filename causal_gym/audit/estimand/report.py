"""The multi-estimand audit's report: per-family summaries, per-estimand coverage,
the width sweep, the probes, and the checks evaluated over them.

Same statistics and the same 1% false-alarm budget as every suite (checks.py,
report.py): consistency checks split CONSISTENCY_BUDGET by Bonferroni; demonstrations (a probe
below honest, the honest forecast above the prior) must be significant at
DEMONSTRATION_LEVEL; the file keeps every check's sufficient statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from causal_gym.audit import stats
from causal_gym.audit.checks import (
    Check,
    Leakage,
    Model,
    Paired,
    RewardSummary,
    WidthSweep,
    band_check,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.estimand.rows import EstimandRow, probe_names, tested_estimands
from causal_gym.audit.knowledge import gain_check, leakage, leakage_check
from causal_gym.audit.report import SuiteReport, seal
from causal_gym.audit.slices import slice_check_count, slice_checks, summarize_slices
from causal_gym.audit.suite import AuditRun
from causal_gym.audit.summary import family_frame, paired, reward_fields


class EstimandCoverage(Model):
    n: int
    covered: int
    coverage: float


class FamilySummary(RewardSummary):
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


class Confounding(Model):
    """obs_vs_rct: whether the outcome's spread or the staged metadata tells a
    confounded extract, and how much the reference's forecast knows (issue 24: under
    generator 2 the residual SD alone gave AUC 0.966 and the reference skill 0.93-0.98)."""

    n_confounded: int
    n_clean: int
    #: AUC of the adjusted residual SD of data.csv, and of trial.csv, for the class.
    auc_extract_sd: float
    auc_trial_sd: float
    brier_skill_mean: float
    brier_skill_sd: float
    metadata: Leakage

    def chance_se(self) -> float:
        n1, n0 = self.n_confounded, self.n_clean
        return math.sqrt((n0 + n1 + 1) / (12.0 * n0 * n1))


class EstimandReport(SuiteReport):
    families: dict[str, FamilySummary]
    width_sweep: dict[str, WidthSweep]
    hack_probes: dict[str, dict[str, Paired]]  # family -> probe -> probe minus honest
    forecasts: dict[str, Forecast]  # families that ask for a probability
    confounding: dict[str, Confounding] = Field(default_factory=dict)


def _coverage(flags: Sequence[bool]) -> EstimandCoverage:
    return EstimandCoverage(n=len(flags), covered=int(sum(flags)), coverage=float(np.mean(flags)))


def family_summary(rows: list[EstimandRow]) -> FamilySummary:
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


def summarize(run: AuditRun) -> EstimandReport:
    numbers, groups = family_frame(run, family_summary, probe_names)
    numbers["forecasts"] = {
        f: forecast(g) for f, g in groups.items() if any(r.prior_skill is not None for r in g)
    }
    numbers["confounding"] = {
        f: confounding(g) for f, g in groups.items() if any(r.confounded is not None for r in g)
    }
    consistency = sum(len(tested_estimands(f)) + 2 for f in groups)  # coverage, band, sweep
    # the two residual-SD AUCs, the skill band, the metadata leakage
    consistency += 4 * len(numbers["confounding"])
    consistency += len(numbers["bayes_prior"])
    numbers["slices"] = summarize_slices(run.rows, lambda r: r.covered)
    consistency += slice_check_count(numbers["slices"])
    return seal(numbers, EstimandReport, evaluate, consistency)


def _auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(np.asarray(labels), np.asarray(scores)))


def confounding(rows: list[EstimandRow]) -> Confounding:
    scored = [r for r in rows if r.confounded is not None and r.residual_sds is not None]
    labels = [bool(r.confounded) for r in scored]
    skills = [r.brier_skill or 0.0 for r in scored]
    return Confounding(
        n_confounded=sum(labels),
        n_clean=len(labels) - sum(labels),
        auc_extract_sd=_auc([r.residual_sds[0] for r in scored], labels),  # type: ignore[index]
        auc_trial_sd=_auc([r.residual_sds[1] for r in scored], labels),  # type: ignore[index]
        brier_skill_mean=float(np.mean(skills)),
        brier_skill_sd=float(np.std(skills, ddof=1)),
        metadata=leakage("a confounded extract", [r.leak_features for r in scored], labels),
    )


#: The residual SD of either file must tell the classes apart with an AUC below this.
SPREAD_AUC_LIMIT = 0.6
#: The honest forecast's Brier skill must lie in this band: detection neither free nor
#: hopeless.
SKILL_BAND = (0.3, 0.8)


def confounding_checks(family: str, c: Confounding, alpha: float) -> list[Check]:
    from scipy.stats import norm

    checks = []
    z = float(norm.isf(alpha))
    se = c.chance_se()
    for what, auc in (("data.csv", c.auc_extract_sd), ("trial.csv", c.auc_trial_sd)):
        # A score tells the classes apart either way round; the check fails only when
        # the data show max(AUC, 1 - AUC) above the limit (a one-sided test at the
        # per-check level, like the generator-knowledge gain: a correct system, whose
        # AUC is at most the limit, fails it with probability at most alpha).
        power = max(auc, 1.0 - auc)
        lower, upper = power - z * se, power + z * se
        checks.append(
            Check(
                name=f"{what}'s residual SD tells confounding with AUC below "
                f"{SPREAD_AUC_LIMIT} ({family})",
                test="one-sided z-test of max(AUC, 1 - AUC) against the limit, the AUC's chance SE",
                passed=lower <= SPREAD_AUC_LIMIT,
                detail=f"AUC {auc:.3f} (max(AUC, 1 - AUC) {power:.3f}, "
                f"interval [{lower:.3f}, {upper:.3f}])",
                false_alarm=alpha,
            )
        )
    n = c.n_confounded + c.n_clean
    band = stats.mean_in_band(c.brier_skill_mean, c.brier_skill_sd, n, SKILL_BAND, alpha)
    checks.append(
        Check(
            name=f"the reference's Brier skill in {SKILL_BAND} ({family})",
            test="interval of the mean misses the band",
            passed=band.passed,
            detail=band.detail,
            false_alarm=band.false_alarm,
        )
    )
    checks.append(leakage_check(family, c.metadata, alpha))
    return checks


def forecast(rows: list[EstimandRow]) -> Forecast:
    scored = [r for r in rows if r.prior_skill is not None and r.brier_skill is not None]
    return Forecast(
        prior_minus_honest=paired(
            [r.prior_skill for r in scored],  # type: ignore[misc]
            [r.brier_skill for r in scored],  # type: ignore[misc]
        ),
        max_abs_prior_skill=max(abs(r.prior_skill) for r in scored),  # type: ignore[arg-type]
    )


def evaluate(report: dict[str, Any]) -> list[Check]:
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
    for family, c in report.get("confounding", {}).items():
        checks += confounding_checks(family, c, alpha)
    checks += [gain_check(f, gain, alpha) for f, gain in report.get("bayes_prior", {}).items()]
    checks += slice_checks(report.get("slices", {}), alpha)
    checks.append(powered_check(checks))
    return checks
