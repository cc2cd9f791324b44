"""What a column's values can be, and the distributions exogenous roots are drawn from.

The data dictionary documents each numeric column as one of five value kinds. A root
(a node without parents) is drawn from a marginal that fits its kind and the theme's
typical mean and spread, then standardized with the marginal's exact mean and SD, so
the structural equations see a unit-variance variable whatever its kind, and the
staged value (mean + sd * standardized) is the draw itself. Only roots may be counts
or integer scores: anything computed from parents is a linear combination, so it is
written through an affine map instead (see staging/placement.py). Keeping every
equation linear in these values keeps E[outcome | treatment, pre-treatment] exactly
linear in the staged columns, which is what the honest adjusted OLS and the exact
truth rest on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

import numpy as np


class ValueKind(StrEnum):
    REAL = "real"  # any real number
    POSITIVE = "positive"  # a positive real number
    BOUNDED = "bounded"  # a real number within [low, high]
    COUNT = "count"  # a non-negative integer
    SCORE = "score"  # an integer within [low, high]


#: Kinds that only an exogenous root can take: a sum of parents is not an integer.
DISCRETE_KINDS = frozenset({ValueKind.COUNT, ValueKind.SCORE})
#: The most skew a root may have (coefficient of variation): beyond it a handful of
#: rows would dominate every regression on the column.
MAX_CV = 1.5


@dataclass(frozen=True)
class Marginal:
    """A root's distribution in staged units; `mean`/`sd` are its exact moments."""

    kind: ValueKind
    family: str  # normal | gamma | beta | negative_binomial | binomial | poisson | beta_binomial
    params: tuple[float, ...]
    mean: float
    sd: float
    low: float = 0.0

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Standardized draws: (value - mean) / sd, exactly mean 0 and variance 1."""
        return (self._values(rng, n) - self.mean) / self.sd

    def _values(self, rng: np.random.Generator, n: int) -> np.ndarray:
        p = self.params
        if self.family == "normal":
            return self.mean + self.sd * rng.standard_normal(n)
        if self.family == "gamma":
            return rng.gamma(p[0], p[1], n)
        if self.family == "beta":
            return self.low + p[2] * rng.beta(p[0], p[1], n)
        if self.family == "negative_binomial":
            return rng.negative_binomial(p[0], p[1], n).astype(np.float64)
        if self.family == "binomial":
            return self.low + rng.binomial(int(p[0]), p[1], n).astype(np.float64)
        if self.family == "poisson":
            return rng.poisson(p[0], n).astype(np.float64)
        if self.family == "beta_binomial":
            success = rng.beta(p[1], p[2], n)
            return self.low + rng.binomial(int(p[0]), success).astype(np.float64)
        raise ValueError(f"unknown marginal family {self.family!r}")


def fit_marginal(
    kind: ValueKind, mean: float, sd: float, low: float | None = None, high: float | None = None
) -> Marginal:
    """The marginal of `kind` closest to the theme's mean and SD (exact where possible)."""
    if kind is ValueKind.REAL:
        return Marginal(kind, "normal", (), mean, sd)
    if kind is ValueKind.POSITIVE:
        sd = min(sd, MAX_CV * mean)
        shape = (mean / sd) ** 2
        return Marginal(kind, "gamma", (shape, sd * sd / mean), mean, sd)
    if kind is ValueKind.COUNT:
        return _count(mean, min(sd, MAX_CV * mean))
    if low is None or high is None or not low < mean < high:
        raise ValueError(f"a {kind} column needs low < mean < high (got {low}, {mean}, {high})")
    if kind is ValueKind.BOUNDED:
        span = high - low
        centre = (mean - low) / span
        spread = (sd / span) ** 2
        total = max(centre * (1 - centre) / spread - 1.0, 1.0)
        a, b = centre * total, (1 - centre) * total
        beta_sd = span * math.sqrt(a * b / (total * total * (total + 1)))
        return Marginal(kind, "beta", (a, b, span), mean, beta_sd, low)
    return _score(mean, sd, int(low), int(high))


def _count(mean: float, sd: float) -> Marginal:
    var = sd * sd
    if var > 1.05 * mean:  # over-dispersed: negative binomial with this mean and variance
        size, prob = mean * mean / (var - mean), mean / var
        return Marginal(ValueKind.COUNT, "negative_binomial", (size, prob), mean, sd)
    if var < 0.95 * mean:  # under-dispersed: binomial
        trials = max(1, round(mean / (1 - var / mean)))
        prob = mean / trials
        exact_sd = math.sqrt(trials * prob * (1 - prob))
        return Marginal(ValueKind.COUNT, "binomial", (trials, prob), mean, exact_sd)
    return Marginal(ValueKind.COUNT, "poisson", (mean,), mean, math.sqrt(mean))


def _score(mean: float, sd: float, low: int, high: int) -> Marginal:
    """An integer scale: beta-binomial over low..high (binomial if less spread is asked)."""
    steps = high - low
    centre = (mean - low) / steps
    binomial_var = steps * centre * (1 - centre)
    ratio = min(sd * sd / binomial_var, 0.9 * steps)
    if ratio <= 1.0:
        exact_sd = math.sqrt(binomial_var)
        return Marginal(ValueKind.SCORE, "binomial", (steps, centre), mean, exact_sd, low)
    total = (steps - ratio) / (ratio - 1.0)
    exact_sd = math.sqrt(binomial_var * ratio)
    params = (steps, centre * total, (1 - centre) * total)
    return Marginal(ValueKind.SCORE, "beta_binomial", params, mean, exact_sd, low)
