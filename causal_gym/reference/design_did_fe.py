"""Two-way fixed effects on an unbalanced panel, and the two estimators built on them:
the imputation estimator of Borusyak, Jaravel and Spiess (the did reference) and the
two-way fixed-effects regression (the probe it is measured against).

Part of the sandbox kit (numpy only). Every fit here is a least-squares problem in
unit effects a_i and period effects b_t over a set of unit-periods, each present once.
Its normal equations are solved through the periods' Schur complement: for fixed b,
a_i is unit i's mean of (y - b_t), which leaves a T x T system (T the number of
periods, at most a few dozen), so a fit costs a pass over the rows plus a small solve
instead of a regression on hundreds of dummies. That keeps the reference, and the
generator's anchor which uses the same weights, fast.

The imputation estimator is linear in the outcomes: tau_hat = sum_it omega_it y_it,
with omega_it = 1 / N1 on the N1 treated unit-periods and omega_it = -(z_i + z_t) on
the untreated ones, z solving the untreated fit's normal equations with the treated
rows' design summed on the right. `omega` is what its variance is built from, both
the estimate clustered by unit (BJS's conservative estimator, with the small-sample
corrections in `imputation`) and the exact variance under a model's error structure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Cells:
    """A set of unit-periods: unit indices in [0, n_units), period indices in
    [0, n_periods), each pair at most once."""

    unit: IntArray
    period: IntArray
    n_units: int
    n_periods: int

    def subset(self, keep: NDArray[np.bool_]) -> Cells:
        """The cells where `keep` holds (same index ranges)."""
        return Cells(self.unit[keep], self.period[keep], self.n_units, self.n_periods)

    def unit_sums(self, values: FloatArray) -> FloatArray:
        """Per-unit sums of a value on the cells."""
        return np.asarray(
            np.bincount(self.unit, weights=values, minlength=self.n_units), dtype=float
        )

    def period_sums(self, values: FloatArray) -> FloatArray:
        """Per-period sums of a value on the cells."""
        return np.asarray(
            np.bincount(self.period, weights=values, minlength=self.n_periods), dtype=float
        )


@dataclass(frozen=True)
class FixedEffects:
    """The normal equations X'X theta = rhs of the two-way design on `cells`, ready to
    solve for any right-hand side (a_i = 0 for a unit without cells, b_t = 0 for the
    first period with cells and for periods without any)."""

    cells: Cells
    incidence: FloatArray  # n_units x n_periods, 1 where a cell is present
    inv_count: FloatArray  # 1 / cells per unit (0 for a unit without cells)
    free: IntArray  # the periods whose b_t is solved for
    schur_inverse: FloatArray  # inverse of the periods' Schur complement on `free`

    @classmethod
    def of(cls, cells: Cells) -> FixedEffects:
        incidence = np.zeros((cells.n_units, cells.n_periods))
        incidence[cells.unit, cells.period] = 1.0
        counts = incidence.sum(axis=1)
        inv_count = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)
        per_period = incidence.sum(axis=0)
        schur = np.diag(per_period) - incidence.T @ (incidence * inv_count[:, None])
        present = np.flatnonzero(per_period > 0)
        free = present[1:]
        inverse = np.linalg.inv(schur[np.ix_(free, free)]) if free.size else np.zeros((0, 0))
        return cls(cells, incidence, inv_count, free, inverse)

    def solve(self, rhs_unit: FloatArray, rhs_period: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(a, b) solving the normal equations for the right-hand side (rhs_unit,
        rhs_period); it must sum to the same total over units as over periods."""
        reduced = rhs_period - self.incidence.T @ (rhs_unit * self.inv_count)
        b = np.zeros(self.cells.n_periods)
        b[self.free] = self.schur_inverse @ reduced[self.free]
        a = (rhs_unit - self.incidence @ b) * self.inv_count
        return a, b

    def fit(self, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Least-squares unit and period effects of y (one value per cell)."""
        return self.solve(self.cells.unit_sums(y), self.cells.period_sums(y))

    def fitted(self, a: FloatArray, b: FloatArray, cells: Cells | None = None) -> FloatArray:
        """a_i + b_t on `cells` (default: the fitted cells)."""
        at = self.cells if cells is None else cells
        return a[at.unit] + b[at.period]

    def leverage(self) -> FloatArray:
        """The hat matrix's diagonal on the fitted cells: x' (X'X)^- x for x = e_i + e_t."""
        full = np.zeros((self.cells.n_periods, self.cells.n_periods))
        full[np.ix_(self.free, self.free)] = self.schur_inverse
        k = self.incidence * self.inv_count[:, None]  # D^-1 C
        cross = -k @ full  # the unit-period block of the inverse
        unit_diag = self.inv_count + np.einsum("it,ts,is->i", k, full, k)
        u, t = self.cells.unit, self.cells.period
        return unit_diag[u] + 2.0 * cross[u, t] + np.diag(full)[t]


@dataclass(frozen=True)
class ImputationFit:
    """The imputation estimate, its unit-clustered standard error, and the weights:
    `omega` on every cell of the panel (0 on treated cells that cannot be imputed),
    `used` the cells that carry a weight."""

    estimate: float
    se: float
    omega: FloatArray
    used: NDArray[np.bool_]
    n_treated: int


def imputation_weights(
    cells: Cells, treated: NDArray[np.bool_]
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """The imputation estimator's weights omega on `cells` (the design alone, no
    outcome) and which treated cells it averages (those whose unit and period both
    have untreated cells)."""
    untreated = cells.subset(~treated)
    fe = FixedEffects.of(untreated)
    has_unit = np.bincount(untreated.unit, minlength=cells.n_units) > 0
    has_period = np.bincount(untreated.period, minlength=cells.n_periods) > 0
    target = treated & has_unit[cells.unit] & has_period[cells.period]
    omega = np.zeros(cells.unit.size)
    n1 = int(target.sum())
    if n1 == 0:
        return omega, target
    omega[target] = 1.0 / n1
    hit = cells.subset(target)
    z_unit, z_period = fe.solve(
        hit.unit_sums(np.full(n1, 1.0 / n1)), hit.period_sums(np.full(n1, 1.0 / n1))
    )
    omega[~treated] = -fe.fitted(z_unit, z_period)
    return omega, target


def imputation(
    cells: Cells, treated: NDArray[np.bool_], group: IntArray, y: FloatArray
) -> ImputationFit:
    """Fit unit and period effects on the untreated cells, impute Y(0) on the treated
    ones, average y - Y(0)-hat. `group` labels the treated cells' effect groups
    (cohort x event time): the standard error's residual of a treated cell is its
    imputed effect minus its group's mean, scaled by sqrt(n / (n - 1)) for the mean's
    own noise; an untreated cell's is its fit residual over sqrt(1 - leverage). The
    clustered sum then estimates omega' Sigma omega with the degrees of freedom the
    fit used put back."""
    omega, target = imputation_weights(cells, treated)
    n1 = int(target.sum())
    if n1 == 0:
        return ImputationFit(float("nan"), float("nan"), omega, target, 0)
    untreated = cells.subset(~treated)
    fe = FixedEffects.of(untreated)
    a, b = fe.fit(y[~treated])
    resid = np.zeros(cells.unit.size)
    lev = np.clip(fe.leverage(), 0.0, 0.99)
    resid[~treated] = (y[~treated] - fe.fitted(a, b)) / np.sqrt(1.0 - lev)
    effects = y[target] - fe.fitted(a, b, cells.subset(target))
    estimate = float(effects.mean())
    labels, inverse = np.unique(group[target], return_inverse=True)
    sizes = np.bincount(inverse, minlength=labels.size).astype(float)
    means = np.bincount(inverse, weights=effects, minlength=labels.size) / sizes
    inflate = np.sqrt(np.divide(sizes, sizes - 1.0, out=np.ones_like(sizes), where=sizes > 1))
    resid[target] = (effects - means[inverse]) * inflate[inverse]
    clusters = cells.unit_sums(omega * resid)
    used_units = int(np.count_nonzero(np.bincount(cells.unit[omega != 0], minlength=cells.n_units)))
    small = used_units / max(used_units - 1, 1)
    se = float(np.sqrt(small * np.sum(clusters**2)))
    return ImputationFit(estimate, se, omega, target | (~treated & (omega != 0)), n1)


@dataclass(frozen=True)
class TwfeFit:
    """OLS of y on the treated indicator with unit and period effects."""

    estimate: float
    se: float
    #: the indicator's residual on the fixed effects: estimate = sum(d_tilde y) / sum(d_tilde^2)
    d_tilde: FloatArray


def twfe(cells: Cells, treated: NDArray[np.bool_], y: FloatArray) -> TwfeFit:
    """The two-way fixed-effects regression by Frisch-Waugh-Lovell, its standard error
    clustered by unit (with the G / (G - 1) factor)."""
    fe = FixedEffects.of(cells)
    d = treated.astype(float)
    d_tilde = d - fe.fitted(*fe.fit(d))
    denom = float(np.sum(d_tilde**2))
    if denom <= 1e-12:
        return TwfeFit(float("nan"), float("nan"), d_tilde)
    y_tilde = y - fe.fitted(*fe.fit(y))
    beta = float(np.sum(d_tilde * y_tilde) / denom)
    clusters = cells.unit_sums(d_tilde * (y_tilde - beta * d_tilde))
    g = int(np.count_nonzero(np.bincount(cells.unit, minlength=cells.n_units)))
    se = float(np.sqrt(g / max(g - 1, 1) * np.sum(clusters**2)) / denom)
    return TwfeFit(beta, se, d_tilde)
