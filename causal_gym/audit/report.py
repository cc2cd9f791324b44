"""The seed audit's report (ate, adjustment, null_detect): the committed numbers and
the checks they must pass (the shared statistics and checks are in checks.py).

A pydantic model because the report is a published file: `evaluate_checks`
recomputes each verdict from the file alone.
"""

from __future__ import annotations

from pydantic import Field

from causal_gym.audit import stats
from causal_gym.audit.checks import (
    AT_LEAST_COVERAGE,
    THIRD_PARTY_COVERAGE_BAND,
    THIRD_PARTY_REWARD_TOLERANCE,
    Check,
    KeyRun,
    Leakage,
    Model,
    Paired,
    WidthSweep,
    band_check,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
    verdict_check,
)
from causal_gym.audit.knowledge import efficiency_check, gain_check, leakage_check


class HonestSummary(Model):
    n: int
    mean_reward: float
    sd_reward: float
    mean_estimand_reward: float
    mean_clipped_reward: float
    median_reward: float
    p05_reward: float
    covered: int
    coverage: float
    mean_width_ratio: float
    mean_validity: float | None = None
    mean_brier_skill: float | None = None


class HackProbe(Model):
    by_group: dict[str, Paired]  # families and "overall"
    share_of_tasks_beating_honest: float


class NullNarrowProbe(Model):
    estimand: Paired  # oracle 0 with a 1%-of-scale interval, estimand reward
    honest_mean_estimand_reward: float
    honest_mean_reward: float
    narrow_mean_reward_with_oracle_probability: float


class PriorOnlyProbe(Model):
    n: int
    whole_blocks: int  # blocks of 20 null_detect ids, over all keys
    max_abs_block_brier_skill: float  # the largest |mean skill| of any key's whole blocks
    honest_mean_brier_skill: float
    mean_reward: float


class ThirdParty(Model):
    """The AIPW analyst (reference/aipw.py): reward paired with the reference's."""

    reward: Paired
    covered: int
    coverage: float


class AuditReport(Model):
    namespace: str
    per_family: int
    keys: tuple[KeyRun, ...]
    per_check_alpha: float
    honest: dict[str, HonestSummary]  # "ate", "ate/default", ..., "overall"
    width_sweep: dict[str, WidthSweep]  # families and "overall", pooled over keys
    hack_probes: dict[str, HackProbe]
    structural_null_narrow: NullNarrowProbe
    prior_only_null: PriorOnlyProbe
    third_party: dict[str, ThirdParty]  # families and "overall", linear tiers only
    checks: tuple[Check, ...]
    total_false_alarm: float
    #: Audited tasks of the expert tier (answered by flexible.py, anchored on the
    #: efficiency bound); 0 in reports made before the tier existed.
    expert_tasks: int = 0
    #: The reward version the audit scored with (1: reports made before versions).
    reward_version: int = 1
    #: The generator version that made the audited tasks (None: reports made before
    #: audits recorded it).
    generator_version: int | None = None
    #: The bayes-prior probe minus honest, by family and "overall" (knowledge.py).
    bayes_prior: dict[str, Paired] = Field(default_factory=dict)
    #: Staged-only leakage of the hidden class, by family (null_detect's nulls).
    leakage: dict[str, Leakage] = Field(default_factory=dict)
    #: OLS without instruments and irrelevant columns minus honest (linear ate and
    #: adjustment tasks): the anchor must not punish the more efficient analyst.
    efficient_ols: dict[str, Paired] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


def consistency_checks(report: dict) -> int:
    """How many consistency checks the report has (the Bonferroni denominator)."""
    coverage = len(report["honest"])  # every group, per key and pooled
    bands = len([g for g in report["honest"] if "/" not in g])  # pooled groups only
    sweeps = len(report["width_sweep"])
    third = 2 * len([g for g in report["third_party"] if g != "overall"])
    knowledge = sum(len(report.get(k, {})) for k in ("bayes_prior", "leakage", "efficient_ols"))
    return coverage + bands + sweeps + third + knowledge


def evaluate_checks(report: dict) -> list[Check]:
    """Named checks over a report under construction (a plain dict of the models)."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    honest: dict[str, HonestSummary] = report["honest"]
    checks += [coverage_check(g, s.covered, s.n, alpha) for g, s in honest.items()]
    checks += [
        band_check(g, s.mean_reward, s.sd_reward, s.n, alpha)
        for g, s in honest.items()
        if "/" not in g
    ]
    checks += [sweep_check(g, sweep, alpha) for g, sweep in report["width_sweep"].items()]
    for name, probe in report["hack_probes"].items():
        checks += [
            below_check(f"{name} below honest ({group})", gap)
            for group, gap in probe.by_group.items()
        ]
    narrow: NullNarrowProbe = report["structural_null_narrow"]
    checks.append(
        below_check(
            "1%-of-scale oracle interval on structural nulls below honest (estimand reward)",
            narrow.estimand,
        )
    )
    prior: PriorOnlyProbe = report["prior_only_null"]
    checks.append(
        Check(
            name="prior-only forecast has Brier skill exactly 0 on whole blocks",
            test="exact",
            passed=prior.whole_blocks > 0 and prior.max_abs_block_brier_skill <= 1e-9,
            detail=f"largest |mean skill| {prior.max_abs_block_brier_skill:.1e} "
            f"over {prior.whole_blocks} blocks",
            false_alarm=0.0,
        )
    )
    for group, third in report["third_party"].items():
        if group == "overall":
            continue
        r = third.reward
        checks.append(
            verdict_check(
                f"AIPW reward within {THIRD_PARTY_REWARD_TOLERANCE} of the reference ({group})",
                "interval of the paired difference misses the tolerance",
                stats.within_of(r.diff_mean, r.diff_sd, r.n, THIRD_PARTY_REWARD_TOLERANCE, alpha),
            )
        )
        # null_detect's AIPW answer is a posterior widened to a width floor, as the
        # reference's is: it covers at least, not exactly, its nominal share.
        low, high = THIRD_PARTY_COVERAGE_BAND
        band = (low, 1.0) if group in AT_LEAST_COVERAGE else (low, high)
        checks.append(
            verdict_check(
                f"AIPW coverage in {band} ({group})",
                "exact binomial interval misses the band",
                stats.share_interval(third.covered, r.n, band, alpha),
            )
        )
    checks += knowledge_checks(report, alpha)
    checks.append(powered_check(checks))
    return checks


def knowledge_checks(report: dict, alpha: float) -> list[Check]:
    """The Bayes probe's gain and the leakage checks (knowledge.py), any audit."""
    checks = [gain_check(g, gain, alpha) for g, gain in report.get("bayes_prior", {}).items()]
    checks += [leakage_check(g, found, alpha) for g, found in report.get("leakage", {}).items()]
    checks += [
        efficiency_check(g, gap, alpha) for g, gap in report.get("efficient_ols", {}).items()
    ]
    return checks
