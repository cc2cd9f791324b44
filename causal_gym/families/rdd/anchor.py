"""The reward anchor r of an `rdd` task, from the model alone.

What a local polynomial estimator of the jump converges to, and its variance, are
integrals over the model's design density and conditional moments: with kernel weights
K(t/h) f(u) on each side, the fit's population coefficients solve G b = E[K r m] and
the sampling variance is e1' G^-1 E[K^2 r r' Var] G^-1 e1 / n (a sandwich). Gauss-
Legendre quadrature gives both for every bandwidth of a grid at once.

r is the 90% width 2 z SD of the robust bias-corrected estimator (the local quadratic
fit, Calonico, Cattaneo and Titiunik's rho = 1) at the bandwidth that minimizes the
local linear fit's mean squared error at the task's size: the honest interval an
efficient analyst can give. The squared bias enters through its running maximum over
smaller bandwidths, so that a bandwidth where an oscillating bias happens to cross zero
(which no data-driven selector finds) cannot pass for the optimum. A fuzzy design's
estimator is the ratio of the outcome's jump to the treatment's; its variance is the
linearized one, the jump of Y - truth D over the compliers' share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causal_gym.families.rdd.model import Array, RddModel

Z90 = 1.6448536269514722
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)
#: Bandwidths searched, as shares of the shorter side of the support.
_GRID = np.geomspace(0.02, 1.0, 60)


@dataclass(frozen=True)
class PopulationFit:
    """Per bandwidth: the probability limit of the jump ratio and n times its variance."""

    bandwidth: Array
    estimate: Array
    n_variance: Array


def population_fit(
    model: RddModel, bandwidth: Array, degree: int, kernel: str = "triangular"
) -> PopulationFit:
    """A local polynomial fit of `degree` on each side at each bandwidth (`kernel`:
    "triangular" or "uniform"; a bandwidth beyond a side uses all of that side)."""
    h = np.asarray(bandwidth, dtype=float)[:, None]
    intercepts: dict[tuple[int, str], Array] = {}
    variance = np.zeros(h.shape[0])
    for z, side in ((0, model.density.left), (1, model.density.right)):
        reach = np.minimum(h, side)
        t = (_NODES[None, :] + 1) * reach / 2  # distance from the cutoff
        w = _WEIGHTS[None, :] * reach / 2
        u = t if z else -t
        k = 1 - t / h if kernel == "triangular" else np.ones_like(t)
        mass = w * k * model.density.pdf(u)
        basis = np.stack([(u / h) ** j for j in range(degree + 1)], axis=-1)
        gram = np.einsum("bg,bgi,bgj->bij", mass, basis, basis)
        rows = np.linalg.solve(
            gram, np.broadcast_to(np.eye(degree + 1)[0], (*h.shape[:1], degree + 1))[..., None]
        )[..., 0]
        equivalent = np.einsum("bgi,bi->bg", basis, rows)  # e1' G^-1 r(u)
        for what, mean in (("y", model.outcome_mean(u, z)), ("d", model.treatment_mean(u, z))):
            intercepts[(z, what)] = np.sum(mass * equivalent * mean, axis=1)
        spread = model.residual_variance(u, z, model.truth)
        variance += np.sum(mass * k * equivalent**2 * spread, axis=1)
    jump_y = intercepts[(1, "y")] - intercepts[(0, "y")]
    jump_d = intercepts[(1, "d")] - intercepts[(0, "d")]
    return PopulationFit(h[:, 0], jump_y / jump_d, variance / jump_d**2)


@dataclass(frozen=True)
class Anchor:
    """The MSE-optimal local linear bandwidth at the task's size and r."""

    bandwidth: float
    width: float
    expected_rows: float


def anchor_width(model: RddModel, n: int) -> Anchor:
    """The anchor r for a task of n rows (module docstring)."""
    grid = _GRID * min(model.density.left, model.density.right)
    linear = population_fit(model, grid, degree=1)
    envelope = np.maximum.accumulate(np.abs(linear.estimate - model.truth))
    best = int(np.argmin(envelope**2 + linear.n_variance / n))
    h = grid[best : best + 1]
    quadratic = population_fit(model, h, degree=2)
    sd = float(np.sqrt(quadratic.n_variance[0] / n))
    return Anchor(float(h[0]), 2 * Z90 * sd, n * expected_share(model, float(h[0])))


def expected_share(model: RddModel, bandwidth: float) -> float:
    """The share of rows within `bandwidth` of the cutoff."""
    total = 0.0
    for sign, side in ((-1.0, model.density.left), (1.0, model.density.right)):
        reach = min(bandwidth, side)
        t = (_NODES + 1) * reach / 2
        total += float(np.sum(_WEIGHTS * reach / 2 * model.density.pdf(sign * t)))
    return total
