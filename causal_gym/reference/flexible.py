"""The honest reference for expert tasks: cross-fitted AIPW with boosted trees.

When the README says relationships may be nonlinear, adjusting linearly for the right
columns is no longer enough: what the columns do to the treatment and the outcome has
to be learned. This analyst keeps analyst.py's cleaning (steps 1-4) and then:

1. splits the clean rows into FOLDS folds (a fixed shuffle, so the answer is a
   function of the staged bytes alone);
2. in each fold, fits on the other folds a gradient-boosted classifier for the
   propensity P(T = 1 | X) and a gradient-boosted regression of Y on X and T, and
   predicts them on the held-out fold (cross-fitting: no row is scored by a model
   that saw it);
3. averages the doubly robust (AIPW) score
       m1 - m0 + T (Y - m1) / e - (1 - T) (Y - m0) / (1 - e),
   with e clipped to CLIP; the SE is the score's SD over sqrt(n), the interval 90%
   normal.

Self-contained like analyst.py (numpy, pandas, scikit-learn; analyst.py beside it).
One thread, fixed seeds and no early stopping: the same bytes give the same answer on
every run.
"""

from __future__ import annotations

import numpy as np

try:  # inside the package
    from causal_gym.reference import analyst
except ImportError:  # copied into a sandbox next to analyst.py
    import analyst  # type: ignore[no-redef]

FOLDS = 5
CLIP = (0.01, 0.99)
#: Boosting settings for both nuisance models: small trees, a moderate number of
#: rounds, leaves of at least 20 rows; no early stopping (it would draw a validation
#: split and make the fit depend on more than the data).
BOOSTING = {
    "max_iter": 100,
    "learning_rate": 0.1,
    "max_leaf_nodes": 8,
    "min_samples_leaf": 20,
    "early_stopping": False,
    "random_state": 0,
}


def _design(clean: object, d: analyst.DataDictionary, covariates: tuple[str, ...]) -> np.ndarray:
    columns = analyst.covariate_columns(clean, covariates, d)
    n = len(clean)  # type: ignore[arg-type]
    return np.column_stack(columns) if columns else np.zeros((n, 1))


def _cross_fit(x: np.ndarray, t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The AIPW score of every row, each from models fitted without its fold."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.model_selection import KFold
    from threadpoolctl import threadpool_limits

    m1, m0, e = np.zeros(len(t)), np.zeros(len(t)), np.zeros(len(t))
    with threadpool_limits(1):
        for train, test in KFold(FOLDS, shuffle=True, random_state=0).split(x):
            propensity = HistGradientBoostingClassifier(**BOOSTING)
            propensity.fit(x[train], t[train])
            e[test] = propensity.predict_proba(x[test])[:, 1]
            outcome = HistGradientBoostingRegressor(**BOOSTING)
            outcome.fit(np.column_stack([x[train], t[train]]), y[train])
            m1[test] = outcome.predict(np.column_stack([x[test], np.ones(len(test))]))
            m0[test] = outcome.predict(np.column_stack([x[test], np.zeros(len(test))]))
    e = np.clip(e, *CLIP)
    return m1 - m0 + t * (y - m1) / e - (1 - t) * (y - m0) / (1 - e)


def fit_flexible(
    staged: object, dictionary: analyst.DataDictionary, covariates: tuple[str, ...] | None = None
) -> analyst.ReferenceFit:
    """The reference fit of an expert task, in analyst.py's ReferenceFit; `covariates`
    defaults to every declared pre-treatment column (decisions.py fits other sets)."""
    d = dictionary
    adjust = d.pre_treatment if covariates is None else covariates
    cleaned = analyst.clean_rows(staged, d, adjust)
    clean = cleaned.frame
    t = clean["__t"].to_numpy(float)
    y = clean[d.outcome].to_numpy(float)
    n_treated = int(t.sum())
    usable = min(n_treated, len(t) - n_treated) >= 2 * FOLDS
    if usable:
        score = _cross_fit(_design(clean, d, adjust), t, y)
        estimate = float(score.mean())
        se = float(score.std(ddof=1) / np.sqrt(len(score)))
    else:
        estimate, se = float("nan"), float("nan")
    return analyst.ReferenceFit(
        estimate=estimate,
        se=se,
        ci_lower=estimate - analyst.Z * se,
        ci_upper=estimate + analyst.Z * se,
        n_staged=cleaned.n_staged,
        n_used=len(y),
        n_treated=n_treated,
        n_control=len(y) - n_treated,
        full_rank=usable,
        dropped_duplicates=cleaned.dropped_duplicates,
        dropped_missing=cleaned.dropped_missing,
        dropped_outliers=cleaned.dropped_outliers,
    )
