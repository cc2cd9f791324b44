"""Drawing one iv task's model from the `scm` stream, with the instrument's strength
set by the tier.

Strength is drawn as a concentration mu^2 (the first-stage F's noncentrality, so the
clean sample's F is about 1 + mu^2) and turned into the model's parameter: the
complier share of a binary instrument (model.complier_share), the distance slope of
a count treatment (its first stage is linear, so exactly). The hooks then certify the
clean sample's F against the tier's band (F_BANDS) and redraw outside it; the truth
is never consulted.

The hard tier is certified on the model instead: its concentration puts the expected
F (1 + mu^2) between 4 and 10, and no sample F is selected on. Selecting samples by
their first-stage F selects on the first stage's noise, which is strongly correlated
with the outcome's there, and under that selection no interval keeps its level (not
even Anderson-Rubin's, exact unconditionally). Its confounding is also stronger (U
nearly all of both errors), which is where the conventional Wald interval of 2SLS
under-covers and the Anderson-Rubin interval does not.

The estimand itself is drawn uniformly on a range the README discloses (Effect
range): +-EFFECT_RANGE outcome SDs for a binary treatment, per session for a count
(scaled by the count's spread), rounded to two significant digits in the outcome's
units. tau0 is then set so the model's exact truth is the drawn value. With a weak
instrument the data say little, and an analyst who combines them with the disclosed
range does better than either alone (reference/design_iv.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import norm

from causal_gym.designs.effect_range import effect_bound
from causal_gym.families.iv.confounding import NEUTRAL_CONFOUNDING_VERSION, neutral_outcome
from causal_gym.families.iv.model import IvModel, Outcome, complier_share
from causal_gym.plan.tiers import Tier

#: The first-stage F a strong-instrument tier's clean sample must show (the certificate).
F_BANDS: dict[Tier, tuple[float, float]] = {
    Tier.EASY: (50.0, 300.0),
    Tier.MEDIUM: (15.0, 50.0),
}
#: The hard tier's expected first-stage F, 1 + mu^2 (the model's certificate).
WEAK_EXPECTED_F = (4.0, 10.0)
#: The range sqrt(mu^2) is drawn from, inside each band with room for the F's spread.
_ROOT_CONCENTRATION: dict[Tier, tuple[float, float]] = {
    Tier.EASY: (8.5, 15.0),
    Tier.MEDIUM: (4.6, 6.2),
    Tier.HARD: (math.sqrt(WEAK_EXPECTED_F[0] - 1.0), math.sqrt(WEAK_EXPECTED_F[1] - 1.0)),
}
#: From generator version 7 the medium tier's sqrt(mu^2) range covers its F band and
#: the F's spread on both sides: the band's certificate, read on the sample, then does
#: the selecting, and the prior no longer pins the first stage's size (version 6's
#: range fixed it within a factor 1.35, which paid +0.011 a task on this tier).
_WIDE_ROOT_CONCENTRATION: dict[Tier, tuple[float, float]] = {
    **_ROOT_CONCENTRATION,
    Tier.MEDIUM: (3.0, 8.0),
}
#: Covariates per tier.
COVARIATES: dict[Tier, tuple[int, int]] = {
    Tier.EASY: (1, 2),
    Tier.MEDIUM: (2, 3),
    Tier.HARD: (2, 3),
}
#: The share of binary-treatment tasks whose effects vary (estimand "late").
LATE_SHARE = 0.6


@dataclass(frozen=True)
class Confounding:
    """Ranges of U's and x's shares of the treatment index's variance, U's weight on
    the outcome and the outcome's own noise (standardized units). U dominates both, so
    the first stage's and the outcome's errors are correlated: what makes OLS biased,
    and, where the instrument is weak, the Wald interval fail."""

    u_share: tuple[float, float]
    x_share: tuple[float, float]
    kappa: tuple[float, float]
    sigma: tuple[float, float]


_STRONG = Confounding((0.45, 0.75), (0.08, 0.25), (0.5, 1.0), (0.5, 0.9))
#: The weak tier's U carries almost all of both errors (their correlation ~0.9).
_WEAK = Confounding((0.7, 0.85), (0.05, 0.1), (0.9, 1.2), (0.1, 0.3))
CONFOUNDING: dict[Tier, Confounding] = {
    Tier.EASY: _STRONG,
    Tier.MEDIUM: _STRONG,
    Tier.HARD: _WEAK,
}
#: The disclosed effect range's half-width before rounding, in standardized outcome
#: units (binary treatment) and per standardized session (count treatment).
EFFECT_RANGE_BINARY = 0.8
EFFECT_RANGE_COUNT = 0.6
#: The always-takers' baseline shift over the never-takers' (standardized units) and
#: the compliers' as a fraction of it.
STRATA = (0.0, 0.0)
COMPLIER_FRACTION = (0.3, 0.7)


def _signed(
    rng: np.random.Generator, low: float, high: float, size: int | None = None
) -> np.ndarray:
    return rng.choice([-1.0, 1.0], size=size) * rng.uniform(low, high, size=size)


def _index(
    k: int, confounding: Confounding, rng: np.random.Generator
) -> tuple[tuple[float, ...], float, float]:
    """The treatment index's loadings (g on x, a on U, s on its own noise), Var = 1:
    U carries most of it, so the confounding is material."""
    share_x = rng.uniform(*confounding.x_share)
    share_u = rng.uniform(*confounding.u_share)
    weights = rng.dirichlet(np.ones(k))
    gamma = rng.choice([-1.0, 1.0], size=k) * np.sqrt(share_x * weights)
    a_u = float(_signed(rng, math.sqrt(share_u), math.sqrt(share_u)))
    return tuple(float(g) for g in gamma), a_u, math.sqrt(1.0 - share_x - share_u)


def _with_truth(model: IvModel, target: float) -> IvModel:
    """The model with tau0 moved so its exact truth is `target` (truth is tau0 plus a
    part that does not depend on tau0)."""
    offset = model.truth() - model.outcome.tau0
    return replace(model, outcome=replace(model.outcome, tau0=target - offset))


def concentration(tier: Tier, rng: np.random.Generator, generator_version: int) -> float:
    """mu^2 for a task of this tier."""
    ranges = _ROOT_CONCENTRATION
    if generator_version >= NEUTRAL_CONFOUNDING_VERSION:
        ranges = _WIDE_ROOT_CONCENTRATION
    return float(rng.uniform(*ranges[tier])) ** 2


def draw_model(
    tier: Tier,
    k: int,
    binary: bool,
    late: bool,
    n: int,
    scale: float,
    rng: np.random.Generator,
    generator_version: int,
) -> tuple[IvModel, float]:
    """One task's model and its disclosed effect range's half-width (in outcome units,
    `scale` per standardized unit): `k` covariates, a binary or count treatment,
    varying effects (`late`) or a constant one, first-stage strength for `n` rows
    from the tier. From version 7 the confounding's kappa and sigma are re-solved so
    that it says nothing about the effect (confounding.py)."""
    model, bound = _draw_model(tier, k, binary, late, n, scale, rng, generator_version)
    if generator_version >= NEUTRAL_CONFOUNDING_VERSION:
        model = neutral_outcome(model, bound / scale, model.outcome.sigma, rng)
    return model, bound


def _draw_model(
    tier: Tier,
    k: int,
    binary: bool,
    late: bool,
    n: int,
    scale: float,
    rng: np.random.Generator,
    generator_version: int,
) -> tuple[IvModel, float]:
    mu2 = concentration(tier, rng, generator_version)
    confounding = CONFOUNDING[tier]
    gamma, a_u, s_w = _index(k, confounding, rng)
    theta = tuple(float(t) for t in _signed(rng, 0.2, 0.6, k))
    kappa = float(_signed(rng, *confounding.kappa))
    sigma = float(rng.uniform(*confounding.sigma))
    if binary:
        p = float(rng.uniform(0.3, 0.6))
        always = float(rng.uniform(0.05, 0.3))
        compliers = min(complier_share(n, p, always, mu2), 0.93 - always)
        bound = effect_bound(EFFECT_RANGE_BINARY, scale)
        target = float(rng.uniform(-bound, bound)) / scale
        tau0 = 0.0
        if late:
            outcome = Outcome(
                theta, kappa, sigma, tau0,
                h_u=float(_signed(rng, 0.2, 0.6)),
                h_x=tuple(float(h) for h in _signed(rng, 0.0, 0.2, k)),
                h_e=float(rng.uniform(0.1, 0.4)),
            )  # fmt: skip
        else:
            outcome = Outcome(theta, kappa, sigma, tau0)
        shift = float(rng.uniform(*STRATA)) * math.copysign(1.0, kappa * a_u)
        strata = (shift, shift * float(rng.uniform(*COMPLIER_FRACTION)))
        model = IvModel(
            binary=True, gamma=gamma, a_u=a_u, s_w=s_w, outcome=outcome, p=p, strata=strata,
            c1=float(norm.isf(always + compliers)), c2=float(norm.isf(always)),
        )  # fmt: skip
        return _with_truth(model, target), bound
    d_loc = float(rng.uniform(6.0, 14.0))
    d_scale = d_loc / float(rng.uniform(3.2, 4.5))
    residual = a_u**2 + s_w**2 + 1.0 / (12.0 * d_scale**2)  # after x, in index units
    bound = effect_bound(EFFECT_RANGE_COUNT / d_scale, scale)
    per_session = float(rng.uniform(-bound, bound)) / scale
    model = IvModel(
        binary=False, gamma=gamma, a_u=a_u, s_w=s_w,
        outcome=Outcome(theta, kappa, sigma, per_session),
        shape=float(rng.uniform(2.5, 5.0)), mean_km=float(rng.uniform(8.0, 25.0)),
        pi=math.sqrt(mu2 / n * residual), d_loc=d_loc, d_scale=d_scale,
    )  # fmt: skip
    return model, bound
