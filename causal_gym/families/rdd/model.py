"""The `rdd` family's model, in the running variable's centred units.

u is the running variable measured from the cutoff in design units (staging maps it
to a score, an age or a date): the eligible side is u >= 0. The model fixes

- the design density of u on [-left, right], a mixture of a uniform, a component
  peaked at the cutoff and one hollow there (so that tasks differ in how many rows
  lie near the cutoff, which is what a local estimator lives on);
- the untreated mean mu0(u) = slope u + amp sin(freq u + phase) + step tanh((u - centre)
  / width): smooth (continuity at the cutoff holds) but not a polynomial, so a global
  polynomial or a wide bandwidth misses, by how much the tier decides;
- the effect tau + g(u) of the treatment on compliers, g another such shape (zero at
  the cutoff, so the two sides' curvatures differ), and, in a fuzzy design,
  always-takers and never-takers whose shares move linearly in u and whose untreated
  levels differ (so that comparing treated with untreated rows is confounded).

A sharp design is the case with no always- or never-takers. In either case the
outcome's jump at the cutoff is c(0) tau and the treatment's jump c(0), the compliers'
share there, so the estimand (the jump ratio; for a sharp design the jump itself) is
exactly `effect`: the truth is a parameter, never a sample estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Density:
    """The design density of u on [-left, right]: weights of the uniform, peaked
    ((1 - |u|/side)^peak_power) and hollow ((|u|/side)^hollow_power) components; each
    non-uniform component puts side/(left + right) of its mass on each side."""

    left: float
    right: float
    w_uniform: float
    w_peak: float
    w_hollow: float
    peak_power: float
    hollow_power: float

    def __post_init__(self) -> None:
        weights = (self.w_uniform, self.w_peak, self.w_hollow)
        if min(weights) < 0 or abs(sum(weights) - 1.0) > 1e-9:
            raise ValueError(f"density weights {weights} are not a mixture")
        if min(self.left, self.right, self.peak_power + 1, self.hollow_power + 1) <= 0:
            raise ValueError("the density needs positive sides and integrable powers")

    def side(self, u: Array) -> Array:
        """The length of the side each point lies on."""
        return np.where(u >= 0, self.right, self.left)

    def pdf(self, u: Array) -> Array:
        """The density at u (zero outside the support)."""
        share = np.clip(np.abs(u) / self.side(u), 0.0, 1.0)
        total = self.left + self.right
        value = (
            self.w_uniform
            + self.w_peak * (self.peak_power + 1) * (1 - share) ** self.peak_power
            + self.w_hollow * (self.hollow_power + 1) * share**self.hollow_power
        ) / total
        return np.where((u >= -self.left) & (u <= self.right), value, 0.0)

    def sample(self, n: int, rng: np.random.Generator) -> Array:
        """Draw n points: a component, a side in proportion to its length, then the distance
        from the cutoff by inverting that component's distribution on the side."""
        component = rng.choice(3, size=n, p=[self.w_uniform, self.w_peak, self.w_hollow])
        right = rng.random(n) < self.right / (self.left + self.right)
        v = rng.random(n)
        share = np.select(
            [component == 0, component == 1],
            [v, 1 - v ** (1 / (self.peak_power + 1))],
            v ** (1 / (self.hollow_power + 1)),
        )
        return np.where(right, share * self.right, -share * self.left)


@dataclass(frozen=True)
class EmpiricalDensity:
    """A real running variable's density on [-left, right]: on each side, a kernel
    smooth of that side's values reflected at the cutoff and at the support's end (so
    that neither edge loses mass), weighted by the side's share of the rows, tabulated
    on a grid. The anchor integrates it; the rows themselves come from the table. Each
    side is smoothed on its own because what a local estimator lives on is the number
    of rows just either side of the cutoff, and a smooth across it would average a
    thin side with a thick one."""

    left: float
    right: float
    grid: Array = field(repr=False, compare=False)
    values: Array = field(repr=False, compare=False)

    @classmethod
    def of(cls, u: Array, points: int = 801) -> EmpiricalDensity:
        """The density of the values u (Silverman's bandwidth on each side)."""
        left, right = float(-u.min()), float(u.max())
        grid = np.linspace(-left, right, points)
        values = np.zeros(points)
        for above, side in ((False, left), (True, right)):
            t = np.abs(u[u >= 0] if above else u[u < 0])
            at = grid if above else -grid
            on = (grid >= 0) if above else (grid < 0)
            h = 1.06 * float(t.std()) * t.size ** (-0.2)
            mirrored = np.concatenate([t, -t, 2 * side - t])
            z = (at[on][:, None] - mirrored[None, :]) / h
            smooth = np.exp(-0.5 * z**2).sum(axis=1) / (t.size * h * np.sqrt(2 * np.pi))
            values[on] = smooth * t.size / u.size
        return cls(left, right, grid, values)

    def pdf(self, u: Array) -> Array:
        """The density at u (zero outside the support; each side's own value up to
        the cutoff)."""
        inside = (u >= -self.left) & (u <= self.right)
        below = np.interp(u, self.grid[self.grid < 0], self.values[self.grid < 0])
        above = np.interp(u, self.grid[self.grid >= 0], self.values[self.grid >= 0])
        return np.where(inside, np.where(u < 0, below, above), 0.0)


@dataclass(frozen=True)
class MeanShape:
    """slope u + amp sin(freq u + phase) + step tanh((u - centre) / width), less its
    value at the cutoff (so it is zero there): smooth, but not a polynomial; a ramp
    whose width is small next to the support bends near the cutoff in a way no
    polynomial fitted to a whole side can follow, while a local fit can."""

    slope: float
    amp: float
    freq: float
    phase: float
    step: float
    centre: float
    width: float

    def _raw(self, u: Array) -> Array:
        wave = self.amp * np.sin(self.freq * u + self.phase)
        ramp = self.step * np.tanh((u - self.centre) / self.width)
        return self.slope * u + wave + ramp

    def __call__(self, u: Array) -> Array:
        return self._raw(u) - self._raw(np.zeros(1))[0]


@dataclass(frozen=True)
class Compliance:
    """Always-taker and never-taker shares a0 + a1 u and n0 + n1 u (compliers the rest),
    their untreated level shifts, and the always-takers' effect over the compliers'."""

    always0: float = 0.0
    always1: float = 0.0
    never0: float = 0.0
    never1: float = 0.0
    shift_always: float = 0.0
    shift_never: float = 0.0
    gain_always: float = 0.0

    @property
    def sharp(self) -> bool:
        """Whether everyone complies (a sharp design)."""
        return self.always0 == self.always1 == self.never0 == self.never1 == 0.0

    def shares(self, u: Array) -> tuple[Array, Array, Array]:
        """(always, never, complier) shares at u."""
        always = self.always0 + self.always1 * u
        never = self.never0 + self.never1 * u
        return always, never, 1.0 - always - never


@dataclass(frozen=True)
class RddModel:
    """The whole model (module docstring); `effect` is the estimand's exact value."""

    density: Density | EmpiricalDensity
    base: MeanShape
    gain: MeanShape
    effect: float
    noise_below: float
    noise_above: float
    compliance: Compliance

    @property
    def sharp(self) -> bool:
        """Whether the design is sharp."""
        return self.compliance.sharp

    @property
    def truth(self) -> float:
        """The effect at the cutoff (sharp) or among compliers at the cutoff (fuzzy):
        the outcome's jump over the treatment's, c(0) effect / c(0)."""
        return self.effect

    def _type_terms(self, u: Array, z: int) -> tuple[tuple[Array, ...], tuple[Array, ...]]:
        """Per type (always, never, complier): its share and its mean of Y - mu0 at u
        on side z, and its treatment; the effect on compliers is effect + slope u."""
        c = self.compliance
        always, never, complier = c.shares(u)
        gain = self.effect + self.gain(u)
        means = (c.shift_always + gain + c.gain_always, np.full_like(u, c.shift_never), z * gain)
        return (always, never, complier), means

    def treatment_mean(self, u: Array, z: int) -> Array:
        """E[D | u] on side z (z = 1: u >= 0)."""
        always, _, complier = self.compliance.shares(u)
        return always + z * complier

    def outcome_mean(self, u: Array, z: int) -> Array:
        """E[Y | u] on side z."""
        shares, means = self._type_terms(u, z)
        return self.base(u) + sum(s * m for s, m in zip(shares, means, strict=True))

    def residual_variance(self, u: Array, z: int, ratio: float) -> Array:
        """Var(Y - ratio D | u) on side z: the noise plus the spread of the types' means
        (the local Wald's linearized variance uses ratio = effect)."""
        shares, means = self._type_terms(u, z)
        treated = (np.ones_like(u), np.zeros_like(u), np.full_like(u, float(z)))
        shifted = [m - ratio * d for m, d in zip(means, treated, strict=True)]
        first = sum(s * m for s, m in zip(shares, shifted, strict=True))
        second = sum(s * m**2 for s, m in zip(shares, shifted, strict=True))
        noise = self.noise_above if z else self.noise_below
        return np.asarray(noise**2 + second - first**2, dtype=float)

    def draw(self, u: Array, rng: np.random.Generator) -> tuple[Array, Array]:
        """The treatment and outcome of rows at u (one uniform for the type, one normal
        for the noise per row, in that order)."""
        always, never, _ = self.compliance.shares(u)
        v = rng.random(u.size)
        noise = rng.standard_normal(u.size)
        eligible = u >= 0
        is_always, is_never = v < always, (v >= always) & (v < always + never)
        treated = is_always | (eligible & ~is_never)
        c = self.compliance
        gain = self.effect + self.gain(u) + np.where(is_always, c.gain_always, 0.0)
        level = self.base(u) + np.where(is_always, c.shift_always, 0.0)
        level = level + np.where(is_never, c.shift_never, 0.0)
        sd = np.where(eligible, self.noise_above, self.noise_below)
        return treated.astype(float), level + treated * gain + sd * noise
