"""Local polynomial regression at a cutoff, and the Imbens-Kalyanaraman bandwidth: the
numerical core of the `rdd` reference (design_rdd.py reads the task, this fits).

Self-contained (numpy only), copied into sandboxes beside design_rdd.py. x is the
running variable measured from the cutoff with the eligible side at x >= 0.

A fit on each side is weighted least squares of y on (1, x/h, ..., (x/h)^p) with
kernel weights; its intercept is a linear function of y, sum_i l_i y_i, so the jump of
any linear combination of outcomes (Y - t D for a fuzzy design's delta method) has the
same weights and an HC variance sum_i l_i^2 e_i^2 from its own residuals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
#: Imbens and Kalyanaraman's constant for the triangular kernel.
IK_CONSTANT = 3.4375


@dataclass(frozen=True)
class SideFit:
    """One side's fit: the rows it used, its basis, and the rows of (B'KB)^-1 B'K
    (coefficients = solve @ y; the first row is each row's weight in the intercept)."""

    rows: NDArray[np.bool_]
    basis: Array
    solve: Array

    @property
    def weights(self) -> Array:
        """Each used row's weight in the intercept."""
        return self.solve[0]

    def residuals(self, y: Array) -> Array:
        """The residuals of y on the used rows (y over all rows)."""
        values = y[self.rows]
        return values - self.basis @ (self.solve @ values)

    def leverage(self) -> Array:
        """The weighted fit's leverages, the hat matrix's diagonal."""
        return np.einsum("ij,ji->i", self.basis, self.solve)


def side_fit(x: Array, h: float, degree: int, kernel: str, eligible: bool) -> SideFit:
    """A local polynomial of `degree` on one side at bandwidth h (`kernel`:
    "triangular", or "uniform" with every row of the side when h is infinite)."""
    side = x >= 0 if eligible else x < 0
    rows = side & (np.abs(x) < h) if np.isfinite(h) else side
    t = x[rows] / (h if np.isfinite(h) else np.max(np.abs(x[rows])))
    k = 1.0 - np.abs(t) if kernel == "triangular" else np.ones_like(t)
    basis = np.vander(t, degree + 1, increasing=True)
    weighted = basis * k[:, None]
    gram_inv = np.linalg.inv(basis.T @ weighted)
    return SideFit(rows, basis, gram_inv @ weighted.T)


@dataclass(frozen=True)
class Jump:
    """The jump of a local fit on both sides: for each outcome its jump, and a function
    of a linear combination's residuals for its variance."""

    below: SideFit
    above: SideFit

    @property
    def n_used(self) -> int:
        """Rows the two sides' fits used."""
        return int(self.below.rows.sum() + self.above.rows.sum())

    def of(self, y: Array) -> float:
        """The jump of y's conditional mean at the cutoff."""
        return float(
            self.above.weights @ y[self.above.rows] - self.below.weights @ y[self.below.rows]
        )

    def variance(self, y: Array, robust: bool = True) -> float:
        """The jump's variance: HC2 (robust: each squared residual over one less its
        leverage) or homoskedastic per side (classical)."""
        total = 0.0
        for fit in (self.below, self.above):
            resid = fit.residuals(y)
            if robust:
                spread = resid**2 / np.maximum(1.0 - fit.leverage(), 1e-3)
                total += float(np.sum(fit.weights**2 * spread))
            else:
                dof = max(resid.size - fit.basis.shape[1], 1)
                total += float(np.sum(fit.weights**2)) * float(resid @ resid) / dof
        return total


def local_jump(x: Array, h: float, degree: int, kernel: str = "triangular") -> Jump:
    """The two sides' fits at bandwidth h."""
    return Jump(side_fit(x, h, degree, kernel, False), side_fit(x, h, degree, kernel, True))


def wald(jump: Jump, y: Array, d: Array | None, robust: bool = True) -> tuple[float, float]:
    """(estimate, SE): the outcome's jump, or for a fuzzy design (d given) its ratio to
    the treatment's jump with the delta-method SE (the jump of y - estimate d, over the
    treatment's jump)."""
    if d is None:
        return jump.of(y), float(np.sqrt(jump.variance(y, robust)))
    first = jump.of(d)
    estimate = jump.of(y) / first
    return estimate, float(np.sqrt(jump.variance(y - estimate * d, robust))) / abs(first)


def _side_moments(x: Array, y: Array, rows: NDArray[np.bool_]) -> tuple[int, float]:
    count = int(rows.sum())
    return count, float(np.var(y[rows], ddof=1)) if count > 1 else 0.0


def ik_bandwidth(x: Array, y: Array) -> float:
    """Imbens and Kalyanaraman's (2012) MSE-optimal bandwidth for the triangular kernel:
    a pilot window for the density and the variances, a cubic for the third
    derivative, quadratics on each side for the second, regularized."""
    n = x.size
    h1 = 1.84 * float(np.std(x, ddof=1)) * n ** (-0.2)
    below, above = (x < 0) & (x > -h1), (x >= 0) & (x < h1)
    n_below, var_below = _side_moments(x, y, below)
    n_above, var_above = _side_moments(x, y, above)
    density = (n_below + n_above) / (2.0 * n * h1)
    middle = (x >= np.median(x[x < 0])) & (x <= np.median(x[x >= 0]))
    xm = x[middle]
    design = np.column_stack([np.ones_like(xm), xm >= 0, xm, xm**2, xm**3])
    third = 6.0 * float(np.linalg.lstsq(design, y[middle], rcond=None)[0][4])
    curvature, regular = [], 0.0
    for variance, eligible in ((var_below, False), (var_above, True)):
        side = x >= 0 if eligible else x < 0
        h2 = (
            3.56 * (variance / (density * max(third**2, 1e-12))) ** (1 / 7) * side.sum() ** (-1 / 7)
        )
        h2 = min(h2, float(np.max(np.abs(x[side]))))
        rows = side & (np.abs(x) <= h2)
        xs = x[rows]
        if rows.sum() < 5:
            raise ValueError("too few rows near the cutoff for the bandwidth's pilot")
        quad = np.linalg.lstsq(np.column_stack([np.ones_like(xs), xs, xs**2]), y[rows], rcond=None)[
            0
        ]
        curvature.append(2.0 * float(quad[2]))
        regular += 2160.0 * variance / (rows.sum() * h2**4)
    denominator = density * ((curvature[1] - curvature[0]) ** 2 + regular)
    return IK_CONSTANT * ((var_below + var_above) / denominator) ** 0.2 * n ** (-0.2)
