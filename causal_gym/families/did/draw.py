"""Drawing a `did` panel model for a task plan: the tier decides the panel's shape
(periods, cohorts, the comparison group's share), the effects' dynamics (the hidden
subtier) and the noise's serial correlation; every draw comes from the scm stream.

- easy: a single adoption date, or two cohorts with one common constant effect;
- medium: two or three cohorts, constant effects that differ by cohort, or effects
  that grow mildly with time since adoption;
- hard: three or four cohorts whose effects start small and grow (two-way fixed
  effects is biased there), on smaller panels with stronger serial correlation.

The number of units is the plan's staged rows over the periods (rows ~ units x
periods), at least MIN_UNITS so that clustering by unit has clusters to work with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from causal_gym.families.did.model import EffectPath, PanelModel
from causal_gym.families.did.real import RealPanel
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import Tier

MIN_UNITS = 24
MIN_COMPARISON = 5
MIN_COHORT = 3
SINGLE, CONSTANT, MILD, DYNAMIC = (
    "single_date", "staggered_constant", "staggered_mild", "staggered_dynamic"
)  # fmt: skip
#: The subtier labels, in order of difficulty.
SUBTIERS = (SINGLE, CONSTANT, MILD, DYNAMIC)
#: The range of an effect's full size, in noise SDs, by subtier. Dynamic effects are
#: larger: they start at a fraction of it, and the bias of two-way fixed effects (the
#: later cohorts compared with earlier ones whose effects are still growing) is a
#: share of it, so it must be several of the estimator's SDs for the subtier to test it.
SIZES = {SINGLE: (0.3, 1.0), CONSTANT: (0.3, 1.0), MILD: (0.4, 1.2), DYNAMIC: (1.2, 2.5)}


@dataclass(frozen=True)
class TierShape:
    """What a tier draws from: periods, subtiers with their probabilities, cohort
    counts of a staggered design, the comparison group's share of units, the spread of
    effects across cohorts, and the AR(1) coefficient."""

    periods: tuple[int, int]
    subtiers: tuple[tuple[str, float], ...]
    cohorts: tuple[int, int]
    comparison_share: tuple[float, float]
    cohort_spread: float
    rho: tuple[float, float]


SHAPES: dict[Tier, TierShape] = {
    Tier.EASY: TierShape((8, 14), ((SINGLE, 0.6), (CONSTANT, 0.4)), (2, 2), (0.3, 0.45), 0.0,
                         (0.0, 0.3)),
    Tier.MEDIUM: TierShape((8, 16), ((CONSTANT, 0.5), (MILD, 0.5)), (2, 3), (0.2, 0.4), 0.3,
                           (0.1, 0.4)),
    Tier.HARD: TierShape((8, 14), ((DYNAMIC, 1.0),), (3, 4), (0.08, 0.2), 0.4, (0.2, 0.5)),
    # the real tier's periods, cohorts and comparison group are its study's; its
    # effects are medium's
    Tier.REAL: TierShape((0, 0), ((CONSTANT, 0.5), (MILD, 0.5)), (0, 0), (0.0, 0.0), 0.3,
                         (0.1, 0.4)),
}  # fmt: skip


def _subtier(shape: TierShape, rng: np.random.Generator) -> str:
    names = [name for name, _ in shape.subtiers]
    probs = np.array([p for _, p in shape.subtiers])
    return names[int(rng.choice(len(names), p=probs / probs.sum()))]


def _adoption_periods(
    subtier: str, count: int, n_periods: int, rng: np.random.Generator
) -> list[int]:
    """In-panel adoption periods: each cohort keeps two untreated periods and one treated."""
    if subtier == SINGLE:
        low, high = round(0.35 * n_periods), round(0.65 * n_periods)
        return [int(rng.integers(low, high + 1))]
    choices = np.arange(2, n_periods - 1)
    return sorted(int(g) for g in rng.choice(choices, size=count, replace=False))


def _split(total: int, parts: int, minimum: int, rng: np.random.Generator) -> list[int]:
    """`total` units in `parts` groups of at least `minimum`, the rest at random."""
    extra = total - parts * minimum
    shares = rng.dirichlet(np.full(parts, 4.0))
    counts = np.floor(shares * extra).astype(int)
    counts[int(np.argmax(shares))] += extra - int(counts.sum())
    return [minimum + int(c) for c in counts]


def _paths(subtier: str, count: int, shape: TierShape, n_periods: int,
           rng: np.random.Generator) -> tuple[EffectPath, ...]:  # fmt: skip
    """Each cohort's effect path: a common size (sign mostly positive) spread by the
    tier's cohort spread (none on easy), and a start and ramp by subtier."""
    low, high = SIZES[subtier]
    size = float(rng.uniform(low, high)) * (1.0 if rng.uniform() < 0.7 else -1.0)
    spread = 0.0 if subtier in (SINGLE,) or shape.cohort_spread == 0 else shape.cohort_spread
    paths = []
    for _ in range(count):
        own = size * (1.0 + float(rng.uniform(-spread, spread)))
        if subtier == MILD:
            start, ramp = float(rng.uniform(0.6, 0.85)), float(rng.uniform(3.0, n_periods / 2))
        elif subtier == DYNAMIC:
            start, ramp = float(rng.uniform(0.0, 0.3)), float(rng.uniform(3.0, n_periods - 2))
        else:
            start, ramp = 1.0, 1.0
        paths.append(EffectPath(own, start, ramp))
    return tuple(paths)


def _period_effects(n_periods: int, season: int, rng: np.random.Generator) -> np.ndarray:
    """The common path: a trend of 0.6-1.5 noise SDs over the panel (either sign), a
    season and a small drift."""
    t = np.arange(n_periods, dtype=float)
    trend = float(rng.uniform(0.6, 1.5)) * (1.0 if rng.uniform() < 0.5 else -1.0)
    amplitude, phase = float(rng.uniform(0.0, 0.4)), float(rng.uniform(0.0, 2 * math.pi))
    drift = np.cumsum(rng.normal(0.0, 0.08, n_periods))
    path = trend * (t / (n_periods - 1) - 0.5) + amplitude * np.sin(
        2 * math.pi * t / season + phase
    )
    return np.asarray(path + drift - drift.mean())


def draw_model(plan: TaskPlan, season: int, rng: np.random.Generator) -> PanelModel:
    """A panel model for the plan (`season`: periods per year, 12 or 4)."""
    shape = SHAPES[plan.tier if plan.tier in SHAPES else Tier.HARD]
    subtier = _subtier(shape, rng)
    n_periods = int(rng.integers(shape.periods[0], shape.periods[1] + 1))
    n_units = max(MIN_UNITS, round(plan.staged_rows / n_periods))
    count = 1 if subtier == SINGLE else int(rng.integers(shape.cohorts[0], shape.cohorts[1] + 1))
    cohorts = _adoption_periods(subtier, count, n_periods, rng)
    n_comparison = max(MIN_COMPARISON, round(n_units * float(rng.uniform(*shape.comparison_share))))
    sizes = _split(n_units - n_comparison, count, MIN_COHORT, rng)
    after = int(rng.integers(1, 5))  # the comparison group's adoption beyond the panel
    never = bool(rng.uniform() < 0.6)
    groups = np.concatenate(
        [np.full(n, g) for n, g in zip(sizes, cohorts, strict=True)]
        + [np.full(n_comparison, n_periods - 1 + after)]
    )
    adoption = groups[rng.permutation(n_units)].astype(np.int64)
    levels = rng.normal(0.0, 0.6, count + 1)
    return PanelModel(
        n_units=n_units,
        n_periods=n_periods,
        adoption=adoption,
        never=np.full(n_units, never) & (adoption >= n_periods),
        cohorts=np.asarray(cohorts, dtype=np.int64),
        paths=_paths(subtier, count, shape, n_periods, rng),
        levels=levels[:count],
        comparison_level=float(levels[count]),
        period_effect=_period_effects(n_periods, season, rng),
        unit_sd=float(rng.uniform(0.6, 1.2)),
        noise_sd=1.0,
        rho=float(rng.uniform(*shape.rho)),
        subtier=subtier,
    )


def draw_real_model(panel: RealPanel, season: int, rng: np.random.Generator) -> PanelModel:
    """The real tier's model on a study's panel (`rng`: the scm stream, after the
    states were chosen): the states' own adoption periods, effects as medium draws
    them, unit levels loading on the states' mean covariates."""
    shape = SHAPES[Tier.REAL]
    subtier = _subtier(shape, rng)
    cohorts = sorted({int(g) for g in panel.adoption if g < panel.n_periods})
    levels = rng.normal(0.0, 0.6, len(cohorts) + 1)
    loadings = rng.uniform(-0.5, 0.5, panel.levels.shape[1])
    return PanelModel(
        n_units=panel.adoption.size,
        n_periods=panel.n_periods,
        adoption=panel.adoption,
        never=panel.adoption >= panel.n_periods,
        cohorts=np.asarray(cohorts, dtype=np.int64),
        paths=_paths(subtier, len(cohorts), shape, panel.n_periods, rng),
        levels=levels[: len(cohorts)],
        comparison_level=float(levels[len(cohorts)]),
        period_effect=_period_effects(panel.n_periods, season, rng),
        unit_sd=float(rng.uniform(0.6, 1.2)),
        noise_sd=1.0,
        rho=float(rng.uniform(*shape.rho)),
        subtier=subtier,
        unit_shift=panel.levels @ loadings,
    )
