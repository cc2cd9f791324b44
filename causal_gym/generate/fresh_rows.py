"""An anchor's efficient estimator run on fresh rows of the hidden SCM.

Reward version 3 computes each multi-estimand anchor from the SCM (each family's
anchor.py); the check that the formulas are right is to run the estimator itself on
fresh clean samples at the staged clean size and compare 2 z_0.95 times the SD of its
estimates with the centre the anchor is built on (audit/anchor_spread.py). Each
family's anchor.py says what its estimator is; the loop and the regressions they
share are here. Nothing staged or scored reads this: it samples from the truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from causal_gym.generate.ols_anchor import design_matrix
from causal_gym.reference.analyst import Z
from causal_gym.scm.model import Scm
from causal_gym.scm.sample import CleanSample

#: What the check reports of one estimand: the centre of its efficient 90% width (from
#: the formulas) and 2 z_0.95 times the SD of the estimator's estimates on fresh rows.
Spread = tuple[float, float]


@dataclass(frozen=True)
class EstimatorPlan:
    """One estimand's estimator on a clean sample, and its per-row variance."""

    estimate: Callable[[CleanSample], float]
    variance: float


def ols_coefficients(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return np.asarray(coef)


def regressors(
    scm: Scm, sample: CleanSample, members: tuple[str, ...], *front: np.ndarray
) -> np.ndarray:
    """An intercept, the `front` columns, then the adjustment set's (categoricals as
    dummies)."""
    adjust = design_matrix(scm, sample.columns, list(members))
    return np.column_stack([np.ones(sample.n_rows), *front, adjust])


def spreads(
    plans: Mapping[str, EstimatorPlan],
    fresh: Callable[[], CleanSample],
    n_used: int,
    replicates: int,
) -> dict[str, Spread]:
    """Every plan run on the same `replicates` fresh samples of `n_used` rows."""
    estimates: dict[str, list[float]] = {name: [] for name in plans}
    for _ in range(replicates):
        sample = fresh()
        for name, plan in plans.items():
            estimates[name].append(plan.estimate(sample))
    return {
        name: (
            2.0 * Z * math.sqrt(plans[name].variance / n_used),
            2.0 * Z * float(np.std(values, ddof=1)),
        )
        for name, values in estimates.items()
    }
