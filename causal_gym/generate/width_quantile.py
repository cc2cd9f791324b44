"""Where the multi-estimand families' anchors sit: a low quantile of the efficient
estimator's own estimated 90% width, not its centre.

An honest analyst does not know the true standard error; its interval's width is an
estimate, scattered around the efficient width by the residual variances (and, for a
product of coefficients, the coefficients) it estimates. With the anchor at the
centre, about half of the efficient analyst's honest intervals fall below it and pay
the narrowness penalty (2 per unit of width), which a wider nominal level avoids to
first order while costing only to second order: on the real tier, whose honest set is
nearly the optimal one, a 91% interval beat the calibrated 90% one by +0.0013 a task
(z 5.8; generate/ols_anchor.py's low_width). So, as there and in the design families
(designs/effect_range.py), r is the ANCHOR_QUANTILE (5%) quantile of that estimated
width: still a property of the task alone, below the efficient analyst's own width on
95% of its samples, and the kink keeps its purpose, charging an interval narrower
than the task can justify. The limit experiment draws each estimated variance as the
true one times chi-square(df) / df (Gaussian noise, df the residual degrees of
freedom) and each coefficient from its asymptotic normal law.
"""

from __future__ import annotations

import math

import numpy as np

from causal_gym.designs.effect_range import ANCHOR_QUANTILE

#: Draws of the limit experiment behind one anchor (the 5% quantile's relative SD is
#: about 0.2% at df 400 with this many).
WIDTH_DRAWS = 4_000


def chi2_shrink(df: int) -> float:
    """The ANCHOR_QUANTILE quantile of sqrt(chi-square(df) / df): where r sits below
    the centre when only a residual variance is estimated."""
    from scipy.stats import chi2

    df = max(df, 1)
    return math.sqrt(float(chi2.ppf(ANCHOR_QUANTILE, df)) / df)


def variance_scatter(rng: np.random.Generator, df: int) -> np.ndarray:
    """WIDTH_DRAWS draws of an estimated variance over the true one."""
    df = max(df, 1)
    return rng.chisquare(df, WIDTH_DRAWS) / df


def low_quantile(widths: np.ndarray) -> float:
    """The anchor: the ANCHOR_QUANTILE quantile of the drawn widths."""
    return float(np.quantile(widths, ANCHOR_QUANTILE))
