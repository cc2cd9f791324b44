"""What the public generator says about a design task's truth, and the probe that
uses it.

The audit's generator-aware probe must know everything the public source discloses
about the truth. For `iv` that is the README's effect range, the very prior the truth
is drawn from, and the reference is already the posterior under it: the probe is the
reference. For `did` and `rdd` the source draws effects from ranges in model units
that reach the staged data through a theme's scale, so the prior is the distribution
the generator induces on truth / (the outcome's SD in the staged rows) in the task's
tier. The tier is public, and the ratio's spread differs by tier: did's hard tier has
larger effects for its noise than its easy tier (median |ratio| 0.48 against 0.34), and a
probe with one prior for every tier was misspecified on both. This module
draws PRIOR_TASKS train tasks per family under the public key (ids far past anything
used), takes that ratio, and cuts each tier's into PRIOR_BINS equal-mass uniform
pieces. The pieces are committed (priors.json, written by scripts/design_priors.py),
so the audit reads them without generating.

The probe combines them with a normal likelihood centred on the reference's estimate
with the SE its 90% interval implies, and answers with the posterior's median and 5%
and 95% quantiles.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path

import numpy as np

from causal_gym.plan.tiers import Tier
from causal_gym.reference.designs import Z90, DesignFit

#: About 800 a tier (the real tier is a fifth of the train tasks).
PRIOR_TASKS = 4000
PRIOR_BINS = 40
PRIORS_PATH = Path(__file__).with_name("priors.json")
#: Families whose README discloses the truth's own prior (the reference uses it).
DISCLOSED = ("iv", "rdd")
_FIRST_INDEX = 10**9
_GRID = 2001


def draw_pieces(family: str, tasks: int = PRIOR_TASKS) -> dict[str, list[list[float]]]:
    """The family's prior pieces [low, high] (equal mass) of truth / outcome SD, by
    tier."""
    from causal_gym.make import generate_task
    from causal_gym.reference.designs import design_fit
    from causal_gym.rng_keys.keys import resolve_key

    key = resolve_key(environ={})
    ratios: dict[str, list[float]] = {}
    for i in range(tasks):
        task = generate_task(f"train:{family}:{_FIRST_INDEX + i}", key)
        [estimand] = task.hidden.estimands.values()
        ratio = estimand.value / design_fit(dict(task.public.files)).scale
        ratios.setdefault(task.public.tier.value, []).append(ratio)
    cuts = np.linspace(0.0, 1.0, PRIOR_BINS + 1)
    return {
        tier: [[float(a), float(b)] for a, b in itertools.pairwise(np.quantile(values, cuts))]
        for tier in (t.value for t in Tier)
        if (values := ratios.get(tier))
    }


def priors_json(table: dict[str, dict[str, list[list[float]]]]) -> str:
    """The committed file's text: one piece a line (6 decimals), so a diff shows which
    moved."""
    blocks = []
    for family, tiers in table.items():
        inner = []
        for tier, parts in tiers.items():
            lines = ",\n   ".join(json.dumps([round(a, 6), round(b, 6)]) for a, b in parts)
            inner.append(f'  "{tier}": [\n   {lines}\n  ]')
        blocks.append(f' "{family}": {{\n' + ",\n".join(inner) + "\n }")
    return "{\n" + ",\n".join(blocks) + "\n}\n"


@cache
def pieces(family: str, tier: str) -> tuple[tuple[float, float], ...]:
    """The committed pieces of a family's tier (priors.json)."""
    table = json.loads(PRIORS_PATH.read_text())
    return tuple((low, high) for low, high in table[family][tier])


def posterior_grid(family: str, tier: str, fit: DesignFit) -> tuple[np.ndarray, np.ndarray] | None:
    """The probe's posterior on a grid: the prior pieces of the family's tier (scaled
    by the staged outcome's SD) times N(estimate, se^2), se from the reference's
    interval; None when the data lie far outside the prior's support."""
    parts = np.asarray(pieces(family, tier)) * fit.scale
    se = max(fit.width / (2.0 * Z90), 1e-12)
    low = min(parts[0, 0], fit.estimate - 8 * se)
    high = max(parts[-1, 1], fit.estimate + 8 * se)
    grid = np.linspace(low, high, _GRID)
    density = np.zeros_like(grid)
    for a, b in parts:
        if b > a:
            density += ((grid >= a) & (grid < b)) / (b - a)
    weight = density * np.exp(-0.5 * ((grid - fit.estimate) / se) ** 2)
    return (grid, weight) if weight.sum() > 0.0 else None


def posterior_answer(family: str, tier: str, fit: DesignFit) -> tuple[float, float, float]:
    """(median, 5%, 95%) of the truth under posterior_grid; the reference's own
    answer when the data lie far outside the prior's support."""
    found = posterior_grid(family, tier, fit)
    if found is None:
        return fit.estimate, fit.ci_lower, fit.ci_upper
    grid, weight = found
    cdf = np.cumsum(weight)
    cdf = (cdf - 0.5 * weight) / cdf[-1]
    median, lower, upper = np.interp([0.5, 0.05, 0.95], cdf, grid)
    return float(median), float(lower), float(upper)
