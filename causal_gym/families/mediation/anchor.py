"""The reward anchor of a `mediation` task (reward version 3): each effect's r, from
the hidden SCM alone.

The efficient estimator in these linear SCMs is the product of coefficients on the
optimal valid adjustment set S (generate/ols_anchor.py's candidates): a, the
treatment's coefficient in M ~ T + S; b and the direct effect c', the mediator's and
the treatment's coefficients in Y ~ T + M + S; indirect = a b, total = c' + a b (which
in OLS equals the treatment's coefficient in Y ~ T + S exactly). With

    R = R_T(S)            T's residual variance given S (the keyed draw)
    s_m^2                 the mediator's own noise (its other parents are confounders,
                          always in S, so Var(M | T, S) = s_m^2)
    s_y^2 = Var(Y | T, M, S), exact from the SCM
    alpha, delta          the T -> M and M -> Y weights

the per-row asymptotic variances are

    direct:   s_y^2 (alpha^2 R + s_m^2) / (R s_m^2)    (R_T given S and M)
    indirect: alpha^2 s_y^2 / s_m^2 + delta^2 s_m^2 / R  (delta method; a and b are
              asymptotically independent)
    total:    (s_y^2 + delta^2 s_m^2) / R

each effect under its best candidate set. The centre of the efficient width is
2 z_0.95 sqrt(V / n), n the rows the honest cleaning keeps; r is the 5% quantile of
the width the estimator itself reports (generate/width_quantile.py says why). The
delta method is the efficient estimator's first-order spread; where the indirect
effect is near zero its sampling distribution is not normal, which the audit's
coverage and width checks see per estimand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from causal_gym.errors import GenerationError
from causal_gym.families.mediation.contract import MEDIATOR_ID
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
    draw_treatment_side,
    treatment_residual,
)
from causal_gym.generate.width_quantile import WIDTH_DRAWS, low_quantile, variance_scatter
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample, sample_clean
from causal_gym.staging.naming import Naming


@dataclass(frozen=True)
class MediationParts:
    """What the three variances are made of, for one adjustment set (the docstring's
    names, per row)."""

    alpha: float
    delta: float
    s_m2: float
    s_y2: float
    r: float

    def variances(
        self,
        alpha: np.ndarray | float | None = None,
        delta: np.ndarray | float | None = None,
        s_m2: np.ndarray | float | None = None,
        s_y2: np.ndarray | float | None = None,
        r: np.ndarray | float | None = None,
    ) -> dict[str, np.ndarray | float]:
        """The three per-row variances, at the true parts or at estimated ones (the
        limit experiment's draws)."""
        a = self.alpha if alpha is None else alpha
        d = self.delta if delta is None else delta
        m2 = self.s_m2 if s_m2 is None else s_m2
        y2 = self.s_y2 if s_y2 is None else s_y2
        rt = self.r if r is None else r
        return {
            "direct": y2 * (a**2 * rt + m2) / (rt * m2),
            "indirect": a**2 * y2 / m2 + d**2 * m2 / rt,
            "total": (y2 + d**2 * m2) / rt,
        }


def candidate_parts(scm: Scm, side: TreatmentSide, candidate: CandidateSet) -> MediationParts:
    """The parts when the regressions adjust for `candidate`."""
    into_m = scm.in_edges(MEDIATOR_ID)
    if not {e.parent for e in into_m} - {TREATMENT_ID} <= set(candidate.members):
        raise GenerationError("a parent of the mediator is outside an adjustment set")
    alpha = next(e.weights[0] for e in into_m if e.parent == TREATMENT_ID)
    into_y = scm.in_edges(OUTCOME_ID)
    delta = next((e.weights[0] for e in into_y if e.parent == MEDIATOR_ID), 0.0)
    s_m2 = scm.node(MEDIATOR_ID).noise_sd ** 2
    s_y2 = candidate.outcome_variance(outcome_noise_variance(scm, given=frozenset({MEDIATOR_ID})))
    return MediationParts(alpha, delta, s_m2, s_y2, treatment_residual(side, candidate.members))


def best_parts(
    scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator
) -> dict[str, MediationParts]:
    """Each effect's parts under the valid set that gives it the smallest variance."""
    sets = candidate_sets(scm)
    side = draw_treatment_side(scm, marginals, rng)
    parts = [candidate_parts(scm, side, c) for c in sets]
    return {
        name: min(parts, key=lambda p: float(p.variances()[name]))
        for name in ("direct", "indirect", "total")
    }


def effect_widths(parts: Mapping[str, MediationParts], n_used: int) -> dict[str, float]:
    """The centre of each effect's efficient 90% width at `n_used` clean rows."""
    return {
        name: 2.0 * Z * math.sqrt(float(p.variances()[name]) / n_used) for name, p in parts.items()
    }


def effect_anchors(
    scm: Scm, parts: Mapping[str, MediationParts], n_used: int, rng: np.random.Generator
) -> dict[str, float]:
    """Each effect's r: the 5% quantile of its estimated width in the limit
    experiment (generate/width_quantile.py), where s_y^2, s_m^2 and R are estimated
    with chi-square scatter and a and b are normal around alpha and delta with their
    asymptotic variances, s_m^2 / R and s_y^2 / s_m^2 per row."""
    df = n_used - len(scm.pre_treatment_ids) - 3
    anchors = {}
    for name, p in parts.items():
        a = p.alpha + rng.standard_normal(WIDTH_DRAWS) * math.sqrt(p.s_m2 / p.r / n_used)
        b = p.delta + rng.standard_normal(WIDTH_DRAWS) * math.sqrt(p.s_y2 / p.s_m2 / n_used)
        drawn = p.variances(
            alpha=a,
            delta=b,
            s_m2=p.s_m2 * variance_scatter(rng, df),
            s_y2=p.s_y2 * variance_scatter(rng, df),
            r=p.r * variance_scatter(rng, df),
        )[name]
        anchors[name] = low_quantile(2.0 * Z * np.sqrt(np.asarray(drawn) / n_used))
    return anchors


def _effect_estimator(
    scm: Scm, members: tuple[str, ...], name: str
) -> Callable[[CleanSample], float]:
    """The product-of-coefficients estimate of one effect, adjusting for `members`."""

    def estimate(sample: CleanSample) -> float:
        t = sample.columns[TREATMENT_ID].astype(np.float64)
        m = sample.columns[MEDIATOR_ID]
        a = ols_coefficients(regressors(scm, sample, members, t), m)[1]
        outcome = ols_coefficients(
            regressors(scm, sample, members, t, m), sample.columns[OUTCOME_ID]
        )
        direct, b = outcome[1], outcome[2]
        return float({"direct": direct, "indirect": a * b, "total": direct + a * b}[name])

    return estimate


def fresh_spreads(
    scm: Scm,
    naming: Naming,
    rows: Mapping[str, int],
    replicates: int,
    rng: np.random.Generator,
) -> dict[str, Spread]:
    """Each effect's centre and its estimator's spread on fresh rows
    (generate/fresh_rows.py), under the set the formulas find best for it."""
    sets = candidate_sets(scm)
    side = draw_treatment_side(scm, naming.marginals, rng)
    per_set = [candidate_parts(scm, side, c).variances() for c in sets]
    plans = {}
    for name in ("direct", "indirect", "total"):
        best = int(np.argmin([float(v[name]) for v in per_set]))
        estimate = _effect_estimator(scm, sets[best].members, name)
        plans[name] = EstimatorPlan(estimate, float(per_set[best][name]))
    n = rows["data.csv"]
    return spreads(plans, lambda: sample_clean(scm, n, rng, naming.marginals), n, replicates)
