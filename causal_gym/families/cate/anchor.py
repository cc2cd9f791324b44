"""The reward anchor of a `cate` task (reward version 3): each level's r, from the
hidden SCM alone.

Version 1 and 2 took r from the reference's own standard error on the staged rows, so
the anchor moved with the sample and an honest analyst whose interval differed from
the reference's in shape was paid for resembling it. Here r is the 90% width of the
efficient linear estimator at the staged size: OLS of Y on the treatment interacted
with the modifier's levels, the level dummies and the optimal valid adjustment set
(generate/ols_anchor.py's candidates, the modifier itself always in), whose per-row
asymptotic variance for level k is

    sigma^2(S) [M^-1]_kk,   M = E[x x'],  x = (1, level dummies, S, T 1{L = 0}, ..., T 1{L = K-1})

with sigma^2(S) = Var(Y | T, L, S), exact from the SCM (the residual is homoskedastic:
an interaction shifts only the treated rows' mean). M needs T only through
E[T z] = E[e z] and E[T^2 1{L = k}] = E[e 1{L = k}], so it is computed from the
keyed draw of T's ancestry that the linear tiers' anchor uses (the propensity e in
place of T, which removes the coin's noise). Columns of S that are not T's parents
(outcome predictors) are independent of T and L, orthogonal to the interactions once
centred, and leave [M^-1]_kk alone, so they are not drawn. Each level takes the best
candidate set for it. The centre of the efficient width is 2 z_0.95 sqrt(V_k / n), n
the rows the honest cleaning keeps; r_k sits at the 5% quantile of the estimated width
below it (generate/width_quantile.py says why), a chi-square factor here since only
the residual variance is estimated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from causal_gym.errors import GenerationError
from causal_gym.generate.efficiency import outcome_noise_variance
from causal_gym.generate.fresh_rows import (
    EstimatorPlan,
    Spread,
    ols_coefficients,
    regressors,
    spreads,
)
from causal_gym.generate.ols_anchor import (
    CandidateSet,
    TreatmentSide,
    candidate_sets,
    design_matrix,
    draw_treatment_side,
)
from causal_gym.generate.width_quantile import chi2_shrink
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample, sample_clean
from causal_gym.staging.naming import Naming

#: A level's estimator on one clean sample.
Estimate = Callable[[CleanSample], float]
#: Rows of T's ancestry behind a cate anchor: a level's moments rest on its own share
#: of them, so the linear tiers' 20,000 left each level's r a 0.5-0.7% relative SD
#: across anchor draws; 100,000 bring it to 0.2-0.3% for 68 ms of CPU a task (one
#: 4-level train task, 8 draws each).
CATE_ANCHOR_DRAWS = 100_000


def _level_variances(
    side: TreatmentSide, modifier: str, others: list[str], levels: int
) -> np.ndarray:
    """[M^-1]_kk for every level k, per row (the docstring's M)."""
    codes = side.columns[modifier]
    e = side.propensity
    n = len(e)
    dummies = [(codes == k).astype(np.float64) for k in range(1, levels)]
    z = np.column_stack([np.ones(n), *dummies, design_matrix(side.scm, side.columns, others)])
    w = np.column_stack([e * (codes == k) for k in range(levels)])  # E[T 1{L=k} | row]
    p = z.shape[1]
    m = np.empty((p + levels, p + levels))
    m[:p, :p] = z.T @ z / n
    m[p:, :p] = w.T @ z / n
    m[:p, p:] = m[p:, :p].T
    m[p:, p:] = np.diag(w.sum(axis=0) / n)
    inverse = np.linalg.inv(m)
    return np.diag(inverse)[p:]


def candidate_level_variances(scm: Scm, side: TreatmentSide, candidate: CandidateSet) -> np.ndarray:
    """Each level's per-row variance when OLS adjusts for `candidate`, in the
    modifier's code order (the order of Scm.level_effects)."""
    if scm.modifier is None or scm.modifier not in side.columns:
        raise GenerationError("a cate anchor needs the effect modifier, a parent of T")
    others = [i for i in candidate.members if i != scm.modifier and i in side.moments.spans]
    sigma2 = candidate.outcome_variance(outcome_noise_variance(scm))
    return sigma2 * _level_variances(side, scm.modifier, others, len(scm.interaction))


def level_variances(
    scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator
) -> tuple[float, ...]:
    """Each level's per-row variance under its best valid set."""
    sets = candidate_sets(scm)
    side = draw_treatment_side(scm, marginals, rng, CATE_ANCHOR_DRAWS)
    best = np.full(len(scm.interaction), math.inf)
    for candidate in sets:
        best = np.minimum(best, candidate_level_variances(scm, side, candidate))
    if not np.all(np.isfinite(best) & (best > 0)):
        raise GenerationError("a level's anchor variance is not finite and positive")
    return tuple(float(v) for v in best)


def level_widths(variances: tuple[float, ...], n_used: int) -> tuple[float, ...]:
    """The centre of each level's efficient 90% width at `n_used` clean rows."""
    return tuple(2.0 * Z * math.sqrt(v / n_used) for v in variances)


def level_anchors(scm: Scm, variances: tuple[float, ...], n_used: int) -> tuple[float, ...]:
    """Each level's r: its centre times the chi-square factor at the regression's
    residual degrees of freedom (every declared column counted, an upper bound)."""
    regressors = 2 * len(variances) + len(scm.pre_treatment_ids)
    shrink = chi2_shrink(n_used - regressors)
    return tuple(width * shrink for width in level_widths(variances, n_used))


def _level_estimator(scm: Scm, members: tuple[str, ...], k: int, levels: int) -> Estimate:
    """Level k's effect: OLS on T x level, the level dummies and `members`."""
    modifier = scm.modifier
    assert modifier is not None
    rest = tuple(m for m in members if m != modifier)

    def estimate(sample: CleanSample) -> float:
        codes = sample.columns[modifier]
        t = sample.columns[TREATMENT_ID].astype(np.float64)
        cells = [t * (codes == j) for j in range(levels)]
        dummies = [(codes == j).astype(np.float64) for j in range(1, levels)]
        x = regressors(scm, sample, rest, *cells, *dummies)
        return float(ols_coefficients(x, sample.columns[OUTCOME_ID])[1 + k])

    return estimate


def fresh_spreads(
    scm: Scm,
    naming: Naming,
    rows: Mapping[str, int],
    replicates: int,
    rng: np.random.Generator,
) -> dict[str, Spread]:
    """Each level's centre and its estimator's spread on fresh rows (generate/fresh_rows.py),
    under the set the formulas find best for it."""
    assert scm.modifier is not None
    levels = naming.columns[scm.modifier].levels
    sets = candidate_sets(scm)
    side = draw_treatment_side(scm, naming.marginals, rng, CATE_ANCHOR_DRAWS)
    per_set = [candidate_level_variances(scm, side, c) for c in sets]
    plans = {}
    for k, level in enumerate(levels):
        best = int(np.argmin([v[k] for v in per_set]))
        estimate = _level_estimator(scm, sets[best].members, k, len(levels))
        plans[level] = EstimatorPlan(estimate, float(per_set[best][k]))
    n = rows["data.csv"]
    return spreads(plans, lambda: sample_clean(scm, n, rng, naming.marginals), n, replicates)
