"""The reward anchor r of an `iv` task, from the model alone.

The reference answers with the effect's posterior under the disclosed effect range
(reference/design_iv.py), whose data part is the reduced form: the instrument's
coefficients (a, s) on the outcome and the treatment, normal around (beta pi, pi) with
covariance Omega / n whatever the instrument's strength. Their moments come from one
keyed draw of the model (pi and Omega as population regressions after partialling out
the covariates); the limit experiment then draws SAMPLES pairs (a, s), takes each
one's 90% posterior width, and r is the ANCHOR_QUANTILE quantile of those widths: the
narrowest that the range and data together justify on all but 5% of this task's
samples. With a strong instrument it is about 2 z90 SE of 2SLS; with a weak one the
disclosed range, not the data, bounds it.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.effect_range import ANCHOR_QUANTILE, POINTS, SAMPLES
from causal_gym.families.iv.model import IvModel
from causal_gym.reference.design_iv import posterior_quantiles


def reduced_form_moments(
    model: IvModel, rng: np.random.Generator, draws: int = 20_000
) -> tuple[float, tuple[float, float, float]]:
    """(pi, Omega): the first stage's population coefficient and the per-row
    covariance of (a, s), from `draws` units of the model."""
    pop = model.draw(rng, draws)
    design = np.column_stack([np.ones(draws), pop.x])
    stacked = np.column_stack([pop.y, pop.d, pop.z])
    coef, *_ = np.linalg.lstsq(design, stacked, rcond=None)
    y, d, z = (stacked - design @ coef).T
    zz = float(z @ z) / draws
    a, s = float(z @ y) / draws / zz, float(z @ d) / draws / zz
    ry, rd = y - a * z, d - s * z
    w = z * z / draws / zz**2
    return s, (float(w @ (ry * ry)), float(w @ (ry * rd)), float(w @ (rd * rd)))


def anchor_width(model: IvModel, bound: float, n: int, rng: np.random.Generator) -> float:
    """R in the model's standardized outcome units, for `n` usable rows and the
    disclosed range's half-width `bound` in the same units."""
    pi, omega = reduced_form_moments(model, rng)
    cov = (omega[0] / n, omega[1] / n, omega[2] / n)
    matrix = np.array([[cov[0], cov[1]], [cov[1], cov[2]]])
    mean = np.array([model.truth() * pi, pi])
    pairs = rng.multivariate_normal(mean, matrix, size=SAMPLES, method="cholesky")
    quantiles = posterior_quantiles(pairs[:, 0], pairs[:, 1], cov, bound, POINTS)
    return float(np.quantile(quantiles[:, 2] - quantiles[:, 1], ANCHOR_QUANTILE))
