"""How biased a confounded obs_vs_rct extract is, measured on the hidden clean sample.

The certificate needs the bias to be material: large against the precision the two
staged datasets offer, or "is the extract biased?" has no answer in the data. The
bias is the adjusted OLS coefficient of the treatment without the hidden confounder
minus the same with it (the oracle), on the clean sample; the precision is the
extract's classical standard error, widened by the trial's smaller size.
"""

from __future__ import annotations

import math

import numpy as np

from causal_gym.families.obs_vs_rct import TRIAL_SHARE
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind, Scm
from causal_gym.scm.sample import CleanSample


def _design(scm: Scm, sample: CleanSample, ids: tuple[str, ...]) -> np.ndarray:
    n = sample.n_rows
    columns = [np.ones(n), sample.columns[TREATMENT_ID].astype(float)]
    for node_id in ids:
        values = sample.columns[node_id]
        if scm.node(node_id).kind is Kind.CATEGORICAL:
            levels = len(scm.node(node_id).level_probs)
            columns += [(values == level).astype(float) for level in range(1, levels)]
        else:
            columns.append(values.astype(float))
    return np.column_stack(columns)


def _treatment_fit(design: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    sigma2 = float(residual @ residual) / (len(y) - design.shape[1])
    inverse = np.linalg.pinv(design.T @ design)
    return float(coef[1]), math.sqrt(sigma2 * float(inverse[1, 1]))


def omitted_bias_in_ses(scm: Scm, sample: CleanSample) -> float:
    """|bias| of the extract's adjusted estimate in combined standard errors."""
    y = sample.columns[OUTCOME_ID]
    declared = scm.pre_treatment_ids
    naive, se = _treatment_fit(_design(scm, sample, declared), y)
    oracle, _ = _treatment_fit(_design(scm, sample, (*declared, *scm.latent_ids)), y)
    combined = se * math.sqrt(1.0 + 1.0 / TRIAL_SHARE[0])
    return abs(naive - oracle) / combined
