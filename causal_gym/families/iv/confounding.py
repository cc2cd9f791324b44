"""Confounding that tells nothing about the effect (generator version 7, issue 54).

Up to version 6 the latent confounder's weight on the outcome (kappa) and the outcome's
own noise (sigma) were drawn from public ranges bounded away from zero. OLS of the
outcome on the treatment (given the instrument and covariates) is then the effect
plus a bias whose size the ranges bound away from zero (so the data show its sign),
and its residual spread pins the weight further: an analyst who read the source could
multiply that law into the reference's likelihood and beat it by 0.02-0.06 reward a
task (issue 54's audit; scripts/iv_nuisance.py measures it). The reference uses the
reduced form and the disclosed range only, so the cure is a generator in which nothing
else carries the effect.

Version 7 draws the observable summaries of the confounding instead of its causes:

* the OLS coefficient's limit, beta_ols = B * G, G ~ Uniform(-OLS_SPREAD, OLS_SPREAD)
  in units of the disclosed half-width B, drawn independently of the effect;
* the OLS residual variance, the largest the confounding could need for any effect
  in the disclosed range plus the tier's own noise sigma^2, again independent of the
  effect given beta_ols.

kappa and sigma are then solved from the model's population regressions (one keyed
draw, POPULATION rows): beta_ols is linear in kappa, the residual variance linear in
sigma^2. The distribution of everything OLS and its residuals report is then the same
whatever the effect, so only the reduced form speaks about it, which is what the
reference's likelihood is. Left alone: moments beyond the second (with a 0/1
treatment the confounder's spread differs a little between the arms).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from causal_gym.families.iv.model import IvModel
from causal_gym.versions import IV_NEUTRAL_CONFOUNDING_VERSION

#: The first generator version that draws confounding this way (versions.py).
NEUTRAL_CONFOUNDING_VERSION = IV_NEUTRAL_CONFOUNDING_VERSION
#: G's range: OLS's limit is up to this many half-widths of the disclosed range away
#: from zero, so its bias is of the size of the effects (and often larger).
OLS_SPREAD = 2.5
#: Rows of the population draw the regressions are read from.
POPULATION = 20_000


@dataclass(frozen=True)
class _Parts:
    """The treatment's coefficient and residual in y ~ 1 + d + z + x of the outcome's
    parts: everything but U and the noise (base), U, and the noise."""

    beta: tuple[float, float, float]
    residual: np.ndarray  # (3, n)


def _parts(model: IvModel, seed: int) -> _Parts:
    """Common random numbers: the same units drawn three times, once with the outcome's
    U weight and noise off, once with only U at weight 1, once with only the noise."""
    out = model.outcome
    base = replace(model, outcome=replace(out, kappa=0.0, sigma=0.0))
    with_u = replace(model, outcome=replace(out, kappa=1.0, sigma=0.0))
    with_e = replace(model, outcome=replace(out, kappa=0.0, sigma=1.0))
    pops = [m.draw(np.random.default_rng(seed), POPULATION) for m in (base, with_u, with_e)]
    first = pops[0]
    design = np.column_stack([np.ones(POPULATION), first.d, first.z, first.x])
    ys = np.column_stack([pops[0].y, pops[1].y - pops[0].y, pops[2].y - pops[0].y])
    coef, *_ = np.linalg.lstsq(design, ys, rcond=None)
    residual = (ys - design @ coef).T
    return _Parts((float(coef[1, 0]), float(coef[1, 1]), float(coef[1, 2])), residual)


def _variance(parts: _Parts, kappa: float, sigma: float) -> float:
    r = parts.residual
    return float(np.var(r[0] + kappa * r[1] + sigma * r[2]))


def neutral_outcome(
    model: IvModel, bound: float, sigma: float, rng: np.random.Generator
) -> IvModel:
    """The model with kappa and sigma set from beta_ols and the residual variance drawn
    as the module's docstring says; `bound` is B in the model's units, `sigma` the
    tier's own noise draw. model's truth is already the drawn effect (kappa and sigma
    do not move it)."""
    g = float(rng.uniform(-OLS_SPREAD, OLS_SPREAD))
    parts = _parts(model, int(rng.integers(2**63)))
    beta_base, beta_u, beta_e = parts.beta
    truth = model.truth()
    target = bound * g

    def kappa_for(effect: float, noise: float) -> float:
        # beta_base moves one for one with the effect (tau0 enters as tau0 * d)
        return (target - (beta_base + effect - truth) - noise * beta_e) / beta_u

    widest = max(_variance(parts, kappa_for(e, 0.0), 0.0) for e in (-bound, bound))
    residual_variance = widest + sigma * sigma * float(np.var(parts.residual[2]))
    kappa = kappa_for(truth, 0.0)
    noise = 0.0
    for _ in range(3):  # beta_e is ~0, so this settles at once
        gap = residual_variance - _variance(parts, kappa, 0.0)
        noise = float(np.sqrt(max(gap, 0.0) / np.var(parts.residual[2])))
        kappa = kappa_for(truth, noise)
    return replace(model, outcome=replace(model.outcome, kappa=kappa, sigma=noise))
