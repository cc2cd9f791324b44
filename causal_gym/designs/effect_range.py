"""A design task's disclosed effect range: the prior its truth is drawn from.

Where the data alone leave the effect uncertain (a weak instrument, a fuzzy or curved
discontinuity), an analyst who knows the range beforehand does better than one who
does not, and the reward's interval score pays for it. So rather than leave that
knowledge in the public source for a generator-aware probe to find, iv and rdd state
it in the README's Design section ("Effect range"), draw the truth uniformly on it,
and their references answer with the posterior under it (reference/designs.py,
design_iv.py, design_rdd.py).

The anchor r of such a task is the ANCHOR_QUANTILE quantile of that posterior's 90%
width over the task's samples: the narrowest that the range and data together justify
on all but 5% of them (a property of the task, drawn from the model alone).
"""

from __future__ import annotations

import math

import numpy as np

from causal_gym.reference.designs import normal_posterior_quantiles

#: The quantile of the reference's posterior width that r is.
ANCHOR_QUANTILE = 0.05
#: Estimates drawn in the limit experiment, and the posterior's grid for each.
SAMPLES = 240
POINTS = 801


def effect_bound(standardized: float, scale: float) -> float:
    """The disclosed half-width in outcome units: `standardized` model units at
    `scale` outcome units each, to two significant digits."""
    value = standardized * scale
    digits = 1 - math.floor(math.log10(value))
    return round(value, digits)


def range_fact(outcome: str, bound: float, per: str = "") -> str:
    """The Design section's "Effect range" value (`per`: " per session", ...)."""
    return (
        f"between -{bound:g} and {bound:g} (units of `{outcome}`{per}); the taskset draws "
        "each task's effect uniformly in this range"
    )


def normal_anchor(truth: float, sd: float, bound: float, rng: np.random.Generator) -> float:
    """R for an estimator that is N(truth, sd^2) (the model's), under the range
    [-bound, bound]: the ANCHOR_QUANTILE quantile of the posterior's 90% width."""
    estimates = rng.normal(truth, sd, SAMPLES)
    quantiles = normal_posterior_quantiles(estimates, sd, bound, POINTS)
    return float(np.quantile(quantiles[:, 2] - quantiles[:, 1], ANCHOR_QUANTILE))
