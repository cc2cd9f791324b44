"""The posterior answer under a prior the generator discloses, for a normal estimate.

Why this exists: a scoring rule that is proper rewards the answer that is optimal
under the task's real prior. For `null_detect` that prior has a point mass at zero
(7 of every 20 tasks have no effect at all), so the calibrated frequentist interval is
not the optimum: shrinking toward zero beats it (measured +0.024 a task under reward
version 1). The honest reference of that family is therefore this module's posterior
under the disclosed prior, and the README says so. For the other seed families the
same computation under their disclosed effect sizes is the audit's `bayes-prior`
probe: what knowing the generator is worth, which the audit bounds.

A prior is an atom at zero plus symmetric uniform pieces on |effect| in [low, high].
With a normal likelihood N(estimate; effect, se^2) every piece's posterior is a
truncated normal, so the posterior CDF is exact (math.erf), and its quantiles come by
bisection. The answer minimizes the expected loss of scoring/reward.py: the posterior
median for the estimate; for the interval, the alpha/2 and 1 - alpha/2 quantiles, or
when those are closer than the width floor, the interval of that width with equal
posterior mass beyond each end (below the floor the narrow penalty makes any
narrower interval cost more).

Self-contained (standard library only) like analyst.py: it is copied into sandboxes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: The disclosed prior of a `null_detect` task: in each keyed block of 20 tasks, 7
#: structural nulls, 7 hard non-nulls with |ATE| in [0.05, 0.25] and 6 wide ones with
#: |ATE| in [0.30, 1.50], each sign equally likely (plan/task_plan.py and
#: families/null_detect.py declare them; a test checks these copies).
NULL_DETECT_PIECES = ((7 / 20, 0.05, 0.25), (6 / 20, 0.30, 1.50))
NULL_DETECT_ATOM = 7 / 20
#: The other seed families' effect sizes under generator version 2: |ATE| in
#: [0.10, 1.50], each sign equally likely.
STANDARD_PIECES = ((1.0, 0.10, 1.50),)
#: The proper level of a 90% interval (scoring/reward.py PROPER_INTERVAL_ALPHA).
ALPHA = 0.10
_BISECTIONS = 80


def _phi_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _phi_pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class Prior:
    """`atom`: P(effect = 0); `pieces`: (weight, low, high) of |effect| uniform on
    [low, high] with a random sign. Weights and atom sum to 1."""

    atom: float
    pieces: tuple[tuple[float, float, float], ...]

    def __post_init__(self) -> None:
        total = self.atom + sum(w for w, _, _ in self.pieces)
        if abs(total - 1.0) > 1e-9 or any(not 0 <= lo < hi for _, lo, hi in self.pieces):
            raise ValueError("a prior's atom and piece weights must sum to 1 over 0 <= low < high")


NULL_DETECT_PRIOR = Prior(NULL_DETECT_ATOM, NULL_DETECT_PIECES)
STANDARD_PRIOR = Prior(0.0, STANDARD_PIECES)
#: Pieces approximating generator version 3's hyperprior (A log-uniform, the ATE
#: uniform on [-A, A]): A at the midpoints of HYPERPRIOR_PIECES equal-mass bins.
HYPERPRIOR_PIECES = 40
#: The README line of a version-3 task (staging/readme.py).
_EFFECT_SIZE = re.compile(
    r"^Effect size: [^\n]*? was drawn uniformly between -A and A .*?, with A drawn "
    r"log-uniformly between ([0-9.]+) and ([0-9.]+)\.",
    re.MULTILINE,
)


def hyperprior(low: float, high: float, pieces: int = HYPERPRIOR_PIECES) -> Prior:
    """The ATE uniform on [-A, A] with A log-uniform on [low, high], as a mixture."""
    span = math.log(high) - math.log(low)
    widths = [math.exp(math.log(low) + (k + 0.5) / pieces * span) for k in range(pieces)]
    return Prior(0.0, tuple((1.0 / pieces, 0.0, a) for a in widths))


def discloses_effect_sizes(readme: str) -> bool:
    """Whether the README carries generator 3's effect-size line (the frozen splits,
    made by generator 2, do not)."""
    return _EFFECT_SIZE.search(readme) is not None


def disclosed_prior(readme: str, family: str) -> Prior:
    """The effect-size prior a task discloses: null_detect's classes; the README's
    effect-size line (generator version 3); else version 2's sizes."""
    if family == "null_detect":
        return NULL_DETECT_PRIOR
    found = _EFFECT_SIZE.search(readme)
    if found is not None:
        return hyperprior(float(found.group(1)), float(found.group(2)))
    return STANDARD_PRIOR


@dataclass(frozen=True)
class _Segment:
    """The posterior on one signed interval [a, b]: mass and the truncated normal."""

    mass: float
    a: float
    b: float


class Posterior:
    """The exact posterior of the effect given estimate ~ N(effect, se^2)."""

    def __init__(self, prior: Prior, estimate: float, se: float) -> None:
        if not (se > 0 and math.isfinite(se) and math.isfinite(estimate)):
            raise ValueError("the posterior needs a finite estimate and a positive se")
        self.estimate, self.se = estimate, se
        segments: list[tuple[float, float, float]] = []  # (unnormalized mass, a, b)
        for weight, low, high in prior.pieces:
            density = weight / (2.0 * (high - low))  # per unit of signed effect
            for a, b in ((low, high), (-high, -low)):
                segments.append((density * se * self._normal_mass(a, b), a, b))
        atom = prior.atom * _phi_pdf(estimate / se)  # the likelihood at 0, times se
        total = atom + sum(m for m, _, _ in segments)
        if not total > 0:  # the estimate is hopelessly far from the prior's support
            raise ValueError("the estimate has no posterior mass under the prior")
        self.atom = atom / total
        self.segments = tuple(_Segment(m / total, a, b) for m, a, b in segments)

    def _normal_mass(self, a: float, b: float) -> float:
        """P(a <= effect <= b) under N(estimate, se^2) as a function of effect."""
        return _phi_cdf((b - self.estimate) / self.se) - _phi_cdf((a - self.estimate) / self.se)

    @property
    def p_nonzero(self) -> float:
        return 1.0 - self.atom

    def cdf(self, x: float) -> float:
        """P(effect <= x), the atom included at x >= 0."""
        total = self.atom if x >= 0.0 else 0.0
        for seg in self.segments:
            if x <= seg.a:
                continue
            whole = self._normal_mass(seg.a, seg.b)
            part = self._normal_mass(seg.a, min(x, seg.b))
            total += seg.mass * (part / whole if whole > 0 else float(x >= seg.b))
        return total

    def _bounds(self) -> tuple[float, float]:
        edges = [s.a for s in self.segments] + [s.b for s in self.segments] + [0.0]
        return min(edges), max(edges)

    def quantile(self, q: float) -> float:
        """The smallest x with cdf(x) >= q."""
        low, high = self._bounds()
        if self.cdf(low) >= q:
            return low
        for _ in range(_BISECTIONS):
            mid = 0.5 * (low + high)
            low, high = (low, mid) if self.cdf(mid) >= q else (mid, high)
        if self.atom > 0 and low < 0.0 <= high:  # the atom holds the quantile
            return 0.0
        return high

    def interval(self, floor: float, alpha: float = ALPHA) -> tuple[float, float]:
        """The loss-optimal interval no narrower than `floor`."""
        lower, upper = self.quantile(alpha / 2.0), self.quantile(1.0 - alpha / 2.0)
        if upper - lower >= floor:
            return lower, upper
        # Equal mass below and above: g(l) = P(effect < l) - P(effect > l + floor)
        # rises with l; bisect between the two ends' extremes.
        low, high = self._bounds()
        low -= floor
        for _ in range(_BISECTIONS):
            mid = 0.5 * (low + high)
            if self.cdf(mid) - (1.0 - self.cdf(mid + floor)) >= 0.0:
                high = mid
            else:
                low = mid
        return high, high + floor


def posterior_answer(prior: Prior, estimate: float, se: float, floor: float) -> dict[str, float]:
    """Estimate, interval and P(effect != 0) minimizing the expected loss. An
    estimate dozens of SEs outside the prior's support (a fit gone wrong, not a task)
    leaves no posterior to compute: the answer is then the likelihood's own 90%
    interval."""
    try:
        post = Posterior(prior, estimate, se)
    except ValueError:
        half = max(floor / 2.0, 1.6448536269514722 * se) if se > 0 else floor / 2.0
        return {
            "estimate": estimate,
            "ci_lower": estimate - half,
            "ci_upper": estimate + half,
            "effect_probability": 1.0 - prior.atom,
        }
    lower, upper = post.interval(floor)
    return {
        "estimate": post.quantile(0.5),
        "ci_lower": lower,
        "ci_upper": upper,
        "effect_probability": post.p_nonzero,
    }
