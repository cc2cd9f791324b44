"""The reward anchor of an `obs_vs_rct` task (reward version 3), from the hidden SCM.

An analyst who knew the extract to be clean would pool it with the trial; one who
knew it confounded would use the trial alone; nobody honest does better than the
pool. So the anchor is built on the 90% width of the inverse-variance pool of the two
files' efficient estimators, each OLS on its optimal valid adjustment set at the rows
the honest cleaning keeps:

    extract:  V_o = sigma^2(S*) / R_T(S*)   (generate/ols_anchor.py, per row)
    trial:    V_t = sigma^2(every declared column) / (1/2 * 1/2)  (a fair coin:
              R_T = 1/4 whatever the set, so the set that explains most of Y wins)
    centre = 2 z_0.95 / sqrt(n_o / V_o + n_t / V_t)

and r is the 5% quantile of the pool's own estimated width below that centre
(generate/width_quantile.py says why), in both classes: the hidden class decides
where the truth lies, not how narrow an honest interval may be, and an anchor that
moved with the class would tell it to anyone who could read the narrowness penalty.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from causal_gym.generate.efficiency import outcome_noise_variance
from causal_gym.generate.fresh_rows import (
    EstimatorPlan,
    Spread,
    ols_coefficients,
    regressors,
    spreads,
)
from causal_gym.generate.ols_anchor import (
    candidate_sets,
    draw_treatment_side,
    ols_anchor,
    treatment_residual,
)
from causal_gym.generate.width_quantile import low_quantile, variance_scatter
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample, sample_clean
from causal_gym.staging.naming import Naming

#: R_T in the trial: a fair coin's variance.
TRIAL_TREATMENT_VARIANCE = 0.25


def file_variances(
    scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator
) -> tuple[float, float]:
    """(V_o, V_t): the extract's and the trial's efficient per-row variances."""
    extract = ols_anchor(scm, marginals, rng).variance
    trial = outcome_noise_variance(scm) / TRIAL_TREATMENT_VARIANCE
    return extract, trial


def pooled_width(variances: tuple[float, float], n_extract: int, n_trial: int) -> float:
    """The centre of the pool's 90% width at the two files' clean row counts."""
    extract, trial = variances
    return 2.0 * Z / math.sqrt(n_extract / extract + n_trial / trial)


def pooled_anchor(
    scm: Scm,
    variances: tuple[float, float],
    n_extract: int,
    n_trial: int,
    rng: np.random.Generator,
) -> float:
    """r: the 5% quantile of the pool's estimated width, each file's variance drawn
    with its chi-square scatter (generate/width_quantile.py)."""
    extract, trial = variances
    regressors = len(scm.pre_treatment_ids) + 2
    extract_hat = extract * variance_scatter(rng, n_extract - regressors)
    trial_hat = trial * variance_scatter(rng, n_trial - regressors)
    widths = 2.0 * Z / np.sqrt(n_extract / extract_hat + n_trial / trial_hat)
    return low_quantile(widths)


def fresh_spreads(
    scm: Scm,
    naming: Naming,
    rows: Mapping[str, int],
    replicates: int,
    rng: np.random.Generator,
) -> dict[str, Spread]:
    """The pool's centre and its spread on fresh rows (generate/fresh_rows.py): OLS on
    the extract's best set and on the trial with every declared column, each on its
    own fresh sample, pooled with the formulas' weights."""
    sets = candidate_sets(scm)
    side = draw_treatment_side(scm, naming.marginals, rng)
    base = outcome_noise_variance(scm)
    extract = [c.outcome_variance(base) / treatment_residual(side, c.members) for c in sets]
    best = sets[int(np.argmin(extract))].members
    n_extract, n_trial = rows["data.csv"], rows["trial.csv"]
    w_extract = n_extract / min(extract)
    w_trial = n_trial / (base / TRIAL_TREATMENT_VARIANCE)
    everything = tuple(scm.pre_treatment_ids)

    def coefficient(sample: CleanSample, members: tuple[str, ...]) -> float:
        t = sample.columns[TREATMENT_ID].astype(np.float64)
        x = regressors(scm, sample, members, t)
        return float(ols_coefficients(x, sample.columns[OUTCOME_ID])[1])

    def pooled(sample: CleanSample) -> float:
        trial = sample_clean(scm, n_trial, rng, naming.marginals, randomized=True)
        both = w_extract * coefficient(sample, best) + w_trial * coefficient(trial, everything)
        return both / (w_extract + w_trial)

    # the plan's variance is the pool's whole variance, so it is read at one "row"
    plan = EstimatorPlan(pooled, 1.0 / (w_extract + w_trial))
    draw = lambda: sample_clean(scm, n_extract, rng, naming.marginals)  # noqa: E731
    return spreads({"ate": plan}, draw, 1, replicates)
