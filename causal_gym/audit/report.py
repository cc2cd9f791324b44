"""The audit report: the committed numbers and the checks they must pass.

A pydantic model because the report is a published file. It stores the sufficient
statistics of every check (counts, means, SDs of paired differences), so
`evaluate_checks` recomputes each verdict from the file alone. Each check names the
statistical test it is and its false-alarm rate (see audit/stats.py); the per-check
level is the 1% budget split over the checks that can fail by chance.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from causal_gym.audit import stats

NOMINAL_COVERAGE = 0.90
REWARD_BAND = (0.75, 0.90)
THIRD_PARTY_REWARD_TOLERANCE = 0.03
THIRD_PARTY_COVERAGE_BAND = (0.86, 0.94)
FALSE_ALARM_BUDGET = 0.01
#: Of the budget, what the consistency checks may spend (split evenly, Bonferroni);
#: the rest is headroom for the demonstrations' estimated power shortfalls.
CONSISTENCY_BUDGET = 0.008
#: Demonstrations ("a probe scores below honest") must be significant at this level.
DEMONSTRATION_LEVEL = 0.05


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KeyRun(Model):
    label: str  # "default" or "random-N"
    fingerprint: str
    requested: int
    materialized: int
    failed_ids: tuple[str, ...]
    mean_generation_attempts: float


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


class Paired(Model):
    """A paired difference (something minus the honest reference) over n tasks."""

    n: int
    mean: float
    diff_mean: float
    diff_sd: float


class WidthSweep(Model):
    n: int
    levels: tuple[float, ...]
    mean_estimand_reward: tuple[float, ...]
    coverage: tuple[float, ...]
    diff_mean_vs_90: tuple[float, ...]
    diff_sd_vs_90: tuple[float, ...]


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


class Leakage(Model):
    """Cross-validated AUC of staged-only features for a hidden class (knowledge.py)."""

    what: str  # "a structural null", ...
    n_positive: int
    n_negative: int
    auc: float

    @property
    def chance_se(self) -> float:
        """The SD of an uninformative score's AUC (Mann-Whitney)."""
        n1, n0 = self.n_positive, self.n_negative
        return math.sqrt((n0 + n1 + 1) / (12.0 * n0 * n1))


class Check(Model):
    name: str
    test: str
    passed: bool
    detail: str
    false_alarm: float


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


def _check(name: str, test: str, verdict: stats.Verdict) -> Check:
    return Check(
        name=name,
        test=test,
        passed=verdict.passed,
        detail=verdict.detail,
        false_alarm=verdict.false_alarm,
    )


def materialized_checks(keys: tuple[KeyRun, ...]) -> list[Check]:
    return [
        Check(
            name=f"all tasks materialized ({run.label})",
            test="exact",
            passed=not run.failed_ids,
            detail=f"{len(run.failed_ids)} of {run.requested} failed",
            false_alarm=0.0,
        )
        for run in keys
    ]


#: Groups whose honest intervals cover at least, not exactly, 90%: null_detect's
#: reference is the posterior's loss-optimal interval, widened to the width floor
#: where the posterior is narrower (reference/posterior.py), so it covers more than
#: its credible 90% (about 0.93 in simulation); "overall" holds those tasks too.
AT_LEAST_COVERAGE = ("null_detect", "overall")


def coverage_check(group: str, covered: int, n: int, alpha: float) -> Check:
    if group.split("/")[0] in AT_LEAST_COVERAGE:
        return _check(
            f"coverage is at least {NOMINAL_COVERAGE} ({group})",
            "one-sided exact binomial test",
            stats.coverage_at_least(covered, n, NOMINAL_COVERAGE, alpha),
        )
    return _check(
        f"coverage is {NOMINAL_COVERAGE} ({group})",
        "two-sided exact binomial test",
        stats.coverage_test(covered, n, NOMINAL_COVERAGE, alpha),
    )


def band_check(group: str, mean: float, sd: float, n: int, alpha: float) -> Check:
    return _check(
        f"honest reward in {REWARD_BAND} ({group})",
        "interval of the mean misses the band",
        stats.mean_in_band(mean, sd, n, REWARD_BAND, alpha),
    )


def sweep_check(group: str, sweep: WidthSweep, alpha: float) -> Check:
    rivals = {
        level: (m, sd)
        for level, m, sd in zip(
            sweep.levels, sweep.diff_mean_vs_90, sweep.diff_sd_vs_90, strict=True
        )
        if level != NOMINAL_COVERAGE
    }
    return _check(
        f"no interval level beats 0.90 ({group})",
        "one-sided paired z-tests, Bonferroni over levels",
        stats.no_better_than(rivals, sweep.n, alpha),
    )


def below_check(name: str, gap: Paired) -> Check:
    """A demonstration: `gap` (something minus honest) is shown to be below zero."""
    return _check(
        name,
        f"one-sided paired z-test at {DEMONSTRATION_LEVEL} (demonstration)",
        stats.shown_below(gap.diff_mean, gap.diff_sd, gap.n, DEMONSTRATION_LEVEL),
    )


def powered_check(checks: list[Check]) -> Check:
    total = sum(c.false_alarm for c in checks)
    return Check(
        name=f"the audit is powered: false alarms below {FALSE_ALARM_BUDGET:.0%}",
        test="sum of the checks' false-alarm rates (Bonferroni bound)",
        passed=total < FALSE_ALARM_BUDGET,
        detail=f"{total:.3%}",
        false_alarm=0.0,
    )


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
            _check(
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
            _check(
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
    from causal_gym.audit.knowledge import efficiency_check, gain_check, leakage_check

    checks = [gain_check(g, gain, alpha) for g, gain in report.get("bayes_prior", {}).items()]
    checks += [leakage_check(g, found, alpha) for g, found in report.get("leakage", {}).items()]
    checks += [
        efficiency_check(g, gap, alpha) for g, gap in report.get("efficient_ols", {}).items()
    ]
    return checks
