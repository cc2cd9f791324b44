"""The statistical tests behind the audit's checks, and their false-alarm rates.

Two kinds of check, both sized by one per-check level `alpha` (the audit splits a 1%
budget across its chance-bearing checks, so by Bonferroni a correct system fails any
of them with probability below 1%):

- consistency: the design's claim is the null hypothesis (coverage is 0.90, no width
  beats the 90% interval, the mean reward lies in its band). The check fails only
  when the data reject it at `alpha`; its false-alarm rate is at most `alpha`, and for
  the exact binomial test it is computed exactly.
- demonstration: the claim is the alternative (a probe scores below honest). The
  check passes only when the data show it at `alpha`; the chance a replicate run
  fails while the claim holds is estimated from the observed gap (a power shortfall).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from scipy.stats import beta, binom, norm


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str
    false_alarm: float  # P(this check fails | the claim it tests is true)


@cache
def binomial_acceptance(n: int, p: float, alpha: float) -> tuple[int, int, float]:
    """The two-sided acceptance region [lo, hi] of k ~ Binomial(n, p) at level alpha
    (alpha/2 per tail) and its exact false-alarm rate P(k outside | p)."""
    lo = int(binom.ppf(alpha / 2, n, p))  # smallest k with P(X <= k) >= alpha/2
    hi = int(binom.isf(alpha / 2, n, p))  # smallest k with P(X > k) <= alpha/2
    rate = float(binom.cdf(lo - 1, n, p) + binom.sf(hi, n, p))
    return lo, hi, rate


def coverage_test(covered: int, n: int, nominal: float, alpha: float) -> Verdict:
    lo, hi, rate = binomial_acceptance(n, nominal, alpha)
    share = covered / n
    return Verdict(
        lo <= covered <= hi,
        f"{share:.4f} ({covered}/{n}); accept {lo / n:.4f}-{hi / n:.4f}",
        rate,
    )


def coverage_at_least(covered: int, n: int, nominal: float, alpha: float) -> Verdict:
    """One-sided: fails when k ~ Binomial(n, nominal) would be this low with
    probability below alpha (for intervals whose design covers at least `nominal`)."""
    lo = int(binom.ppf(alpha, n, nominal))  # smallest k with P(X <= k) >= alpha
    rate = float(binom.cdf(lo - 1, n, nominal))
    return Verdict(
        covered >= lo, f"{covered / n:.4f} ({covered}/{n}); accept >= {lo / n:.4f}", rate
    )


def mean_in_band(
    mean: float, sd: float, n: int, band: tuple[float, float], alpha: float
) -> Verdict:
    """Fails when the (1 - alpha) interval of the mean lies wholly outside the band."""
    half = float(norm.isf(alpha / 2)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    return Verdict(
        high >= band[0] and low <= band[1],
        f"{mean:.4f} [{low:.4f}, {high:.4f}] vs band [{band[0]}, {band[1]}]",
        alpha / 2,  # at a band edge one side can fire
    )


def no_better_than(
    diffs: dict[float, tuple[float, float]], n: int, alpha: float, margin: float = 0.0
) -> Verdict:
    """Width sweep: for every other level, paired mean(reward(level) - reward(0.90))
    with its SD; fails if any is significantly above `margin` (one-sided, alpha split
    over the levels)."""
    per = alpha / max(len(diffs), 1)
    z = float(norm.isf(per))

    def score(level: float) -> float:
        mean, sd = diffs[level]
        if sd > 0:
            return (mean - margin) / (sd / math.sqrt(n))
        return math.inf if mean > margin else -math.inf

    worst = max(diffs, key=score)
    zscore = score(worst)
    against = f" against {margin:+.3f}" if margin else ""
    return Verdict(
        zscore <= z,
        f"closest rival {worst:.2f}: {diffs[worst][0]:+.5f}{against} (z {zscore:+.2f}, "
        f"limit {z:.2f})",
        alpha,
    )


def shown_below(diff_mean: float, diff_sd: float, n: int, alpha: float) -> Verdict:
    """Demonstration that a paired mean difference (probe - honest) is below 0."""
    z = float(norm.isf(alpha))
    se = diff_sd / math.sqrt(n) if n else math.inf
    upper = diff_mean + z * se
    gap = -diff_mean / se if se > 0 else math.inf
    miss = float(norm.cdf(z - gap)) if math.isfinite(gap) else 0.0
    return Verdict(
        upper < 0,
        f"{diff_mean:+.4f} (upper bound {upper:+.4f})",
        miss,
    )


def within_of(diff_mean: float, diff_sd: float, n: int, tolerance: float, alpha: float) -> Verdict:
    """Fails when the (1 - alpha) interval of a paired difference lies wholly outside
    [-tolerance, tolerance]."""
    half = float(norm.isf(alpha / 2)) * diff_sd / math.sqrt(n)
    low, high = diff_mean - half, diff_mean + half
    return Verdict(
        high >= -tolerance and low <= tolerance,
        f"{diff_mean:+.4f} [{low:+.4f}, {high:+.4f}] vs +-{tolerance}",
        alpha / 2,
    )


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """The exact (1 - alpha) interval of a binomial share k/n."""
    low = float(beta.ppf(alpha / 2, k, n - k + 1)) if k > 0 else 0.0
    high = float(beta.isf(alpha / 2, k + 1, n - k)) if k < n else 1.0
    return low, high


def share_interval(k: int, n: int, band: tuple[float, float], alpha: float) -> Verdict:
    """Fails when the exact (Clopper-Pearson) interval of k/n misses the band."""
    low, high = clopper_pearson(k, n, alpha)
    return Verdict(
        high >= band[0] and low <= band[1],
        f"{k / n:.4f} [{low:.4f}, {high:.4f}] vs [{band[0]}, {band[1]}]",
        alpha / 2,
    )


def share_shown_below(k: int, n: int, limit: float, alpha: float) -> Verdict:
    """Demonstration that a binomial share is below `limit`: the one-sided exact upper
    bound of k/n must be. The power shortfall is estimated at the observed share: the
    chance that a replicate's count exceeds the largest count that would still pass."""
    upper = float(beta.isf(alpha, k + 1, n - k)) if k < n else 1.0
    passing = k
    while passing < n and float(beta.isf(alpha, passing + 2, n - passing - 1)) < limit:
        passing += 1
    miss = float(binom.sf(passing, n, k / n)) if upper < limit else 1.0
    return Verdict(upper < limit, f"{k / n:.4f} ({k}/{n}; upper bound {upper:.4f})", miss)
