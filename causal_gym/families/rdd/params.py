"""How an `rdd` task's model is drawn, tier by tier (model.py says what it means).

The tiers move three things a local estimator cares about: the curvature of the
conditional means near the cutoff (a faster, larger wave and a steeper ramp), the
density of rows there (peaked at the cutoff when easy, hollow when hard) and the
design (always sharp when easy, fuzzy half of the time at medium, two times in three
when hard). Everything is in units of the noise's standard deviation (about 1); the
staging rescales the outcome to its theme's units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from causal_gym.families.rdd.model import (
    Compliance,
    Density,
    EmpiricalDensity,
    MeanShape,
    RddModel,
)
from causal_gym.plan.tiers import Tier

Range = tuple[float, float]


@dataclass(frozen=True)
class TierShape:
    """Ranges each task of a tier draws its model's parameters from (the effect's shape
    takes `gain_share` of the untreated mean's wave and ramp); the ramp is centred
    `offset` ramp widths from the cutoff."""

    fuzzy_share: float
    curvature: str  # the subtier's word for it
    amp: Range
    freq: Range
    step: Range
    step_width: Range
    peak: Range
    hollow: Range
    offset: Range = (0.5, 1.5)
    gain_share: float = 0.6


TIER_SHAPES: dict[Tier, TierShape] = {
    Tier.EASY: TierShape(0.0, "gentle", (0.3, 1.0), (1.5, 3.0), (0.0, 0.5), (0.3, 0.5),
                         (0.3, 0.6), (0.0, 0.0)),
    Tier.MEDIUM: TierShape(0.5, "curved", (1.0, 2.5), (3.0, 6.0), (1.0, 2.5), (0.1, 0.25),
                           (0.0, 0.3), (0.0, 0.3)),
    Tier.HARD: TierShape(2 / 3, "strongly_curved", (1.5, 3.0), (4.0, 6.5), (1.5, 3.0),
                         (0.1, 0.2), (0.0, 0.0), (0.1, 0.35)),
    # the real tier's density is its study's (EmpiricalDensity), so peak and hollow
    # are unused; its means are easy's, its design mix medium's
    Tier.REAL: TierShape(0.5, "gentle_real", (0.3, 1.0), (1.5, 3.0), (0.0, 0.5), (0.3, 0.5),
                         (0.0, 0.0), (0.0, 0.0)),
}  # fmt: skip


def _u(rng: np.random.Generator, bounds: Range) -> float:
    return float(rng.uniform(*bounds))


def _signed(rng: np.random.Generator, bounds: Range) -> float:
    return _u(rng, bounds) * (1.0 if rng.random() < 0.5 else -1.0)


def draw_compliance(rng: np.random.Generator, reach: float) -> Compliance:
    """Always- and never-taker shares of 5-20% at the cutoff, each drifting by at most
    half its level across the support, so compliers are at least 60% of the rows there."""
    always0, never0 = _u(rng, (0.05, 0.2)), _u(rng, (0.05, 0.2))
    return Compliance(
        always0=always0,
        always1=_u(rng, (-0.5, 0.5)) * always0 / reach,
        never0=never0,
        never1=_u(rng, (-0.5, 0.5)) * never0 / reach,
        shift_always=_u(rng, (-0.6, 0.6)),
        shift_never=_u(rng, (-0.6, 0.6)),
        gain_always=_u(rng, (-0.4, 0.4)),
    )


def draw_shape(rng: np.random.Generator, shape: TierShape, share: float) -> MeanShape:
    """A conditional mean's shape with `share` of the tier's wave and ramp, the ramp
    centred on a random side of the cutoff."""
    width = _u(rng, shape.step_width)
    return MeanShape(
        slope=_u(rng, (-1.0, 1.0)) * share,
        amp=_u(rng, shape.amp) * share,
        freq=_u(rng, shape.freq),
        phase=_u(rng, (0.0, 2 * math.pi)),
        step=_signed(rng, shape.step) * share,
        centre=_signed(rng, shape.offset) * width,
        width=width,
    )


#: Below this many usable rows a tier's curvature shrinks as sqrt(n / N_FULL): a
#: small sample's optimal bandwidth then keeps enough rows, and the curvature's bias
#: stays the same number of anchor widths r (which shrink as 1 / sqrt(n)).
N_FULL = 800


#: The effect range's half-width before rounding to the outcome's units (model units).
EFFECT_RANGE = 1.0


def draw_model(
    tier: Tier, rng: np.random.Generator, n: int = N_FULL, effect_range: float = EFFECT_RANGE
) -> RddModel:
    """A tier's model for `n` usable rows from the scm stream (a fixed order of draws),
    its effect uniform on [-effect_range, effect_range] (model units; the README
    discloses the range, designs/effect_range.py)."""
    shape = TIER_SHAPES[tier]
    size = min(1.0, math.sqrt(n / N_FULL))
    fuzzy = rng.random() < shape.fuzzy_share
    left, right = _u(rng, (0.7, 1.3)), _u(rng, (0.7, 1.3))
    peak, hollow = _u(rng, shape.peak), _u(rng, shape.hollow)
    density = Density(
        left=left,
        right=right,
        w_uniform=1.0 - peak - hollow,
        w_peak=peak,
        w_hollow=hollow,
        peak_power=_u(rng, (1.0, 2.0)),
        hollow_power=_u(rng, (1.0, 2.0)),
    )
    return _draw_means(rng, shape, size, fuzzy, density, effect_range)


def draw_real_model(
    rng: np.random.Generator, n: int, effect_range: float, density: EmpiricalDensity
) -> RddModel:
    """The real tier's model: the study's running variable (its density given), the
    conditional means, effect and design drawn as draw_model draws them."""
    shape = TIER_SHAPES[Tier.REAL]
    size = min(1.0, math.sqrt(n / N_FULL))
    fuzzy = rng.random() < shape.fuzzy_share
    return _draw_means(rng, shape, size, fuzzy, density, effect_range)


def _draw_means(
    rng: np.random.Generator,
    shape: TierShape,
    size: float,
    fuzzy: bool,
    density: Density | EmpiricalDensity,
    effect_range: float,
) -> RddModel:
    base = draw_shape(rng, shape, size)
    gain = draw_shape(rng, shape, size * shape.gain_share)
    effect = float(rng.uniform(-effect_range, effect_range))
    noise_below, noise_above = _u(rng, (0.8, 1.2)), _u(rng, (0.8, 1.2))
    reach = max(density.left, density.right)
    compliance = draw_compliance(rng, reach) if fuzzy else Compliance()
    return RddModel(density, base, gain, effect, noise_below, noise_above, compliance)


def subtier(tier: Tier, model: RddModel) -> str:
    """The hidden difficulty cell: the design and the tier's curvature."""
    return f"{'sharp' if model.sharp else 'fuzzy'}_{TIER_SHAPES[tier].curvature}"
