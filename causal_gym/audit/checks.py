"""What every audit is made of: the statistics a report stores, the checks computed
from them, and the false-alarm budget they share.

A report stores the sufficient statistics of every check (counts, means, SDs of
paired differences), so its verdicts are recomputed from the file alone. Each check
names the statistical test it is and its false-alarm rate (audit/stats.py); the
per-check level is the 1% budget split over the checks that can fail by chance. The
seed suite (seed/report.py), the estimand one (estimand/report.py), the expert one
(expert/report.py) and the generator-knowledge checks (knowledge.py) build on this.
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


class Paired(Model):
    """A paired difference (something minus the honest reference) over n tasks."""

    n: int
    mean: float
    diff_mean: float
    diff_sd: float


class CoveredSummary(Model):
    """What a one-ATE suite adds to the reward summary: how many honest intervals
    covered, and the mean of the family's components."""

    covered: int
    coverage: float
    mean_validity: float | None = None
    mean_brier_skill: float | None = None


class RewardSummary(Model):
    """The honest reward's distribution over a group of tasks, which every suite's
    per-group summary starts from (summary.reward_fields computes it)."""

    n: int
    mean_reward: float
    sd_reward: float
    mean_estimand_reward: float
    median_reward: float
    p05_reward: float
    #: Honest interval width over the anchor r (1 on linear tiers; on the expert tier
    #: r is the efficiency bound's width, so how far the reference is from the best).
    mean_width_ratio: float


class WidthSweep(Model):
    n: int
    levels: tuple[float, ...]
    mean_estimand_reward: tuple[float, ...]
    coverage: tuple[float, ...]
    diff_mean_vs_90: tuple[float, ...]
    diff_sd_vs_90: tuple[float, ...]


class SliceCoverage(Model):
    n: int
    covered: int


class Slice(Model):
    """One public slice's numbers (audit/slices.py: family x public tier, x estimand
    where a family answers several). `bayes_prior` and `model_gain` are task rewards on
    a task slice and estimand rewards on an estimand slice."""

    family: str
    tier: str
    estimand: str | None = None
    n: int
    bayes_prior: Paired
    #: E_post[probe - reference] per task (mean and SD; None where the suite's probe
    #: has no posterior of its own).
    model_gain: Paired | None = None
    coverage: dict[str, SliceCoverage] = Field(default_factory=dict)
    width_sweep: WidthSweep | None = None


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


def verdict_check(name: str, test: str, verdict: stats.Verdict) -> Check:
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
        return verdict_check(
            f"coverage is at least {NOMINAL_COVERAGE} ({group})",
            "one-sided exact binomial test",
            stats.coverage_at_least(covered, n, NOMINAL_COVERAGE, alpha),
        )
    return verdict_check(
        f"coverage is {NOMINAL_COVERAGE} ({group})",
        "two-sided exact binomial test",
        stats.coverage_test(covered, n, NOMINAL_COVERAGE, alpha),
    )


def band_check(group: str, mean: float, sd: float, n: int, alpha: float) -> Check:
    return verdict_check(
        f"honest reward in {REWARD_BAND} ({group})",
        "interval of the mean misses the band",
        stats.mean_in_band(mean, sd, n, REWARD_BAND, alpha),
    )


def sweep_check(group: str, sweep: WidthSweep, alpha: float, margin: float = 0.0) -> Check:
    """No other interval level scores significantly better than 0.90 (by more than
    `margin` a task, where a suite allows one)."""
    rivals = {
        level: (m, sd)
        for level, m, sd in zip(
            sweep.levels, sweep.diff_mean_vs_90, sweep.diff_sd_vs_90, strict=True
        )
        if level != NOMINAL_COVERAGE
    }
    name = (
        f"no interval level beats 0.90 by more than {margin} a task"
        if margin
        else ("no interval level beats 0.90")
    )
    return verdict_check(
        f"{name} ({group})",
        "one-sided paired z-tests, Bonferroni over levels",
        stats.no_better_than(rivals, sweep.n, alpha, margin),
    )


def below_check(name: str, gap: Paired) -> Check:
    """A demonstration: `gap` (something minus honest) is shown to be below zero."""
    return verdict_check(
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
