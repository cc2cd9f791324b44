"""The iv family's model: a latent confounder U, observed covariates x, an instrument
z independent of both, a treatment moved by all three and an outcome moved by the
treatment, x and U but never by z.

Two treatment shapes. A binary treatment is a threshold model with principal strata:
the index W = g'x + a U + s e is standard normal; D(0) = 1{W > c2}, D(1) = 1{W > c1}
with c1 < c2, so W > c2 are always-takers, c1 < W <= c2 compliers, W <= c1
never-takers, and monotonicity holds by construction. The effect tau = tau0 + h_u U +
h'x + h_e eta varies (LATE tasks) or is tau0 for everyone (ATE tasks). Because (x, U,
W) are jointly normal, the compliers' mean effect is exact:
LATE = tau0 + b E[W | c1 < W <= c2], b = (h_u a + h'g), a truncated normal mean.
A count treatment (sessions) is a rounded linear index that a continuous instrument
(distance, in km) lowers, with a constant effect per unit: the truth is that slope.

Everything is in standardized outcome units here; the theme's affine map to the
staged units (families/iv/themes.py) multiplies the truth and the anchor by its scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class Population:
    """Units drawn from the model: covariates x (n, k), the instrument z as staged
    (0/1 or km), the treatment d as staged (0/1 or a count) and the outcome y in
    standardized units."""

    x: np.ndarray
    z: np.ndarray
    d: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Outcome:
    """y = theta'x + kappa U + sigma eps + d (tau0 + h_u U + h'x + h_e eta)."""

    theta: tuple[float, ...]
    kappa: float
    sigma: float
    tau0: float
    h_u: float = 0.0
    h_x: tuple[float, ...] = ()
    h_e: float = 0.0

    @property
    def constant(self) -> bool:
        """Whether the effect is the same for every unit."""
        return self.h_u == 0.0 and self.h_e == 0.0 and not any(self.h_x)

    def values(
        self, x: np.ndarray, u: np.ndarray, d: np.ndarray, eps: np.ndarray, eta: np.ndarray
    ) -> np.ndarray:
        """The outcome of units with these draws under treatment d."""
        base = x @ np.asarray(self.theta) + self.kappa * u + self.sigma * eps
        if self.constant:
            return base + self.tau0 * d
        effect = self.tau0 + self.h_u * u + x @ np.asarray(self.h_x) + self.h_e * eta
        return base + effect * d


@dataclass(frozen=True)
class IvModel:
    """One task's model. `binary` picks the threshold treatment with a Bernoulli(p)
    instrument; otherwise the instrument is Gamma(shape, mean / shape) km, rounded to
    0.1, and the treatment max(0, round(d_loc + d_scale (-pi zs + g'x + a U + s e)))
    with zs the standardized distance."""

    binary: bool
    gamma: tuple[float, ...]
    a_u: float
    s_w: float
    outcome: Outcome
    #: The always-takers' and the compliers' mean outcome without treatment over the
    #: never-takers' (a binary treatment's principal strata differ in their baseline,
    #: beyond what U explains: the strata themselves confound).
    strata: tuple[float, float] = (0.0, 0.0)
    # binary treatment: instrument share and the thresholds of W
    p: float = 0.5
    c1: float = 0.0
    c2: float = 0.0
    # count treatment: distance's Gamma law and the index's slope in it
    shape: float = 3.0
    mean_km: float = 10.0
    pi: float = 0.0
    d_loc: float = 10.0
    d_scale: float = 3.0

    def __post_init__(self) -> None:
        if self.binary and not self.c1 < self.c2:
            raise ValueError("the complier band needs c1 < c2")
        if not self.binary and not self.outcome.constant:
            raise ValueError("a count treatment has a constant effect (its truth is a slope)")

    @property
    def k(self) -> int:
        """The number of covariates."""
        return len(self.gamma)

    @property
    def shares(self) -> tuple[float, float, float]:
        """(always-takers, compliers, never-takers) of a binary treatment."""
        always = float(norm.sf(self.c2))
        never = float(norm.cdf(self.c1))
        return always, 1.0 - always - never, never

    @property
    def sd_km(self) -> float:
        """The distance's standard deviation under its Gamma law."""
        return self.mean_km / math.sqrt(self.shape)

    def truth(self) -> float:
        """The estimand exactly (standardized units): the compliers' mean effect for a
        binary treatment, tau0 where the effect is constant."""
        out = self.outcome
        if out.constant:
            return out.tau0
        b = out.h_u * self.a_u + float(np.dot(out.h_x, self.gamma))
        band = float(norm.cdf(self.c2) - norm.cdf(self.c1))
        mean_w = float(norm.pdf(self.c1) - norm.pdf(self.c2)) / band
        return out.tau0 + b * mean_w

    def ate(self) -> float:
        """The population average effect (x, U, eta have mean zero): tau0."""
        return self.outcome.tau0

    def draw(self, rng: np.random.Generator, n: int) -> Population:
        """Draw n units, the instrument independent of everything else."""
        x = rng.standard_normal((n, self.k))
        u, e, eps, eta = rng.standard_normal((4, n))
        w = x @ np.asarray(self.gamma) + self.a_u * u + self.s_w * e
        if self.binary:
            z = (rng.random(n) < self.p).astype(float)
            d = np.where(z > 0, w > self.c1, w > self.c2).astype(float)
        else:
            z = np.round(rng.gamma(self.shape, self.mean_km / self.shape, n), 1)
            z = np.maximum(z, 0.1)
            d = self._sessions(z, w)
        y = self.outcome.values(x, u, d, eps, eta) + self._baseline(w)
        return Population(x, z, d, y)

    def _baseline(self, w: np.ndarray) -> np.ndarray:
        """The strata's baseline shifts (zero for a count treatment)."""
        if not self.binary:
            return np.zeros_like(w)
        always, complier = self.strata
        return always * (w > self.c2) + complier * ((w > self.c1) & (w <= self.c2))

    def _sessions(self, km: np.ndarray, w: np.ndarray) -> np.ndarray:
        zs = (km - self.mean_km) / self.sd_km
        return np.maximum(0.0, np.round(self.d_loc + self.d_scale * (w - self.pi * zs)))


def first_stage_f(pop: Population) -> float:
    """The conventional first-stage F (the squared t of z in d ~ 1 + z + x), what the
    certificate reads on the clean sample."""
    n = len(pop.d)
    design = np.column_stack([np.ones(n), pop.z, pop.x])
    gram = design.T @ design
    coef = np.linalg.solve(gram, design.T @ pop.d)
    residual = pop.d - design @ coef
    sigma2 = float(residual @ residual) / (n - design.shape[1])
    var = sigma2 * float(np.linalg.inv(gram)[1, 1])
    return float(coef[1] ** 2 / var) if var > 0 else math.inf


def complier_share(n: int, p: float, always: float, concentration: float) -> float:
    """The complier share that gives a binary instrument the concentration
    n p (1-p) pi_c^2 / sigma^2 = `concentration` (sigma^2 the first stage's residual
    variance, the arms' Bernoulli variances averaged; the covariates' small share of
    it is ignored): the positive root of a quadratic in pi_c."""
    q = always
    a = n * p * (1 - p) + concentration * p
    b = -concentration * p * (1 - 2 * q)
    c = -concentration * q * (1 - q)
    return (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
