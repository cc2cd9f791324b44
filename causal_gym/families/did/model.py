"""The `did` family's model: a panel whose untreated outcomes move in parallel.

In model units (staging maps them to a theme's dollars or visits), unit i in cohort g
(its adoption period, or none within the panel for the comparison group) has

    Y_it(0) = alpha_i + lambda_t + e_it,      Y_it(1) = Y_it(0) + tau(g, t - g),

with alpha_i = level_g + unit_sd * z_i (cohorts may differ in level: parallel trends
restricts changes, not levels), lambda_t a common path (trend, season, drift), and
e_it a stationary AR(1) within unit with marginal SD noise_sd and autocorrelation rho,
independent across units. Parallel trends and no anticipation hold by construction.

The effect tau(g, e) = size_g (start + (1 - start) min(e / ramp, 1)) is a fixed
function of the cohort and the event time e: constant (start = 1), growing mildly, or
growing from a small start (the dynamic case, where two-way fixed effects is biased).
The estimand, the average of tau over a set of treated unit-periods that the design
fixes (which rows reach data.csv is drawn independently of the outcomes), is then an
exact average of this function: `att` computes it, no sample enters it.

Everything here is drawn from the scm stream except the outcomes' noise (`sample`,
data stream).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class EffectPath:
    """tau(e) of one cohort: `size` (start + (1 - start) min(e / ramp, 1)), e >= 0."""

    size: float
    start: float
    ramp: float

    def __post_init__(self) -> None:
        if not (0.0 <= self.start <= 1.0 and self.ramp > 0):
            raise ValueError(f"effect path start={self.start}, ramp={self.ramp} is invalid")

    def at(self, event: FloatArray) -> FloatArray:
        """The effect at event times e (e >= 0: periods since adoption)."""
        ramp = np.minimum(np.asarray(event, dtype=float) / self.ramp, 1.0)
        return np.asarray(self.size * (self.start + (1.0 - self.start) * ramp), dtype=float)


@dataclass(frozen=True)
class PanelModel:
    """One task's panel model. `adoption[i]` is unit i's adoption period index, at or
    beyond n_periods for the comparison group (`never[i]`: never adopts, rather than
    adopting after the panel ends); `cohorts` the in-panel adoption periods, with
    `paths[k]` the effect of cohort cohorts[k] and `levels[k]` its mean level (the
    comparison group's is `comparison_level`)."""

    n_units: int
    n_periods: int
    adoption: IntArray
    never: NDArray[np.bool_]
    cohorts: IntArray
    paths: tuple[EffectPath, ...]
    levels: FloatArray
    comparison_level: float
    period_effect: FloatArray
    unit_sd: float
    noise_sd: float
    rho: float
    subtier: str
    #: Each unit's fixed level beyond its cohort's (the real tier's covariate loading);
    #: None: none. A fixed level drops out of every estimator whose weights sum to zero
    #: within a unit, so it moves neither the truth nor the anchor.
    unit_shift: FloatArray | None = None

    def __post_init__(self) -> None:
        if len(self.paths) != self.cohorts.size or self.levels.size != self.cohorts.size:
            raise ValueError("one effect path and one level per cohort")
        if self.adoption.size != self.n_units or self.period_effect.size != self.n_periods:
            raise ValueError("adoption per unit and one effect per period")
        if np.any(self.cohorts < 1) or np.any(self.cohorts >= self.n_periods):
            raise ValueError("every cohort needs a pre-period and a post-period")

    @property
    def in_panel(self) -> NDArray[np.bool_]:
        """Units that adopt during the panel."""
        return self.adoption < self.n_periods

    def unit_level(self) -> FloatArray:
        """Each unit's expected level (its cohort's)."""
        out = np.full(self.n_units, self.comparison_level)
        for k, g in enumerate(self.cohorts):
            out[self.adoption == g] = self.levels[k]
        return out if self.unit_shift is None else out + self.unit_shift

    def effect(self, unit: IntArray, period: IntArray) -> FloatArray:
        """The effect tau of each unit-period: 0 before adoption (and for the comparison group)."""
        out = np.zeros(unit.size)
        g = self.adoption[unit]
        for k, cohort in enumerate(self.cohorts):
            hit = (g == cohort) & (period >= cohort)
            out[hit] = self.paths[k].at(period[hit] - cohort)
        return out

    def treated(self, unit: IntArray, period: IntArray) -> NDArray[np.bool_]:
        """Whether each unit-period is at or after its unit's adoption."""
        return np.asarray(period >= self.adoption[unit])

    def att(self, unit: IntArray, period: IntArray) -> float:
        """The exact average effect over the treated unit-periods among the given ones."""
        hit = self.treated(unit, period)
        if not hit.any():
            raise ValueError("no treated unit-period")
        return float(self.effect(unit[hit], period[hit]).mean())

    def expected(self, unit: IntArray, period: IntArray) -> FloatArray:
        """E[Y_it] at the given unit-periods (noise and unit draws averaged out)."""
        base = self.unit_level()[unit] + self.period_effect[period]
        return np.asarray(base + self.effect(unit, period))

    def correlation(self) -> FloatArray:
        """The within-unit correlation of e over periods (T x T, rho^|s - t|)."""
        lags = np.abs(np.subtract.outer(np.arange(self.n_periods), np.arange(self.n_periods)))
        return np.asarray(self.rho**lags, dtype=float)

    def sample(self, rng: np.random.Generator) -> FloatArray:
        """Observed outcomes of the full panel (n_units x n_periods), from the data stream."""
        z = rng.standard_normal(self.n_units)
        shocks = rng.standard_normal((self.n_units, self.n_periods))
        noise = np.empty_like(shocks)
        noise[:, 0] = shocks[:, 0]
        innovation = np.sqrt(1.0 - self.rho**2)
        for t in range(1, self.n_periods):
            noise[:, t] = self.rho * noise[:, t - 1] + innovation * shocks[:, t]
        alpha = self.unit_level() + self.unit_sd * z
        units = np.repeat(np.arange(self.n_units), self.n_periods)
        periods = np.tile(np.arange(self.n_periods), self.n_units)
        effect = self.effect(units, periods).reshape(self.n_units, self.n_periods)
        base = alpha[:, None] + self.period_effect[None, :] + effect
        return np.asarray(base + self.noise_sd * noise)

    def estimator_sd(self, unit: IntArray, period: IntArray, omega: FloatArray) -> float:
        """The exact SD of the linear estimator sum omega_it Y_it over the given cells
        under the model (unit draws drop out when omega sums to zero within each unit,
        as the imputation estimator's weights do): sqrt(sum_i omega_i' Sigma omega_i)."""
        weights = np.zeros((self.n_units, self.n_periods))
        weights[unit, period] = omega
        variance = self.noise_sd**2 * float(np.sum((weights @ self.correlation()) * weights))
        unit_totals = weights.sum(axis=1)
        variance += self.unit_sd**2 * float(np.sum(unit_totals**2))
        return float(np.sqrt(variance))
