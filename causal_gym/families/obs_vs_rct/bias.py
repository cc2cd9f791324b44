"""How biased a confounded obs_vs_rct extract is, measured on the hidden clean sample.

The certificate needs the bias to be material: large against the precision the two
staged datasets offer, or "is the extract biased?" has no answer in the data. The
bias is the adjusted OLS coefficient of the treatment without the hidden confounder
minus the same with it (the oracle), on the clean sample; the precision is the
extract's classical standard error, widened by the trial's smaller size.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_gym.families.obs_vs_rct.contract import TRIAL_SHARE
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


def omitted_bias_in_ses(scm: Scm, sample: CleanSample, share: float = TRIAL_SHARE[0]) -> float:
    """|bias| of the extract's adjusted estimate in combined standard errors (the
    trial's SE taken as the extract's over sqrt(share); generator 2 used the smallest
    share, generator 3 the task's own)."""
    y = sample.columns[OUTCOME_ID]
    declared = scm.pre_treatment_ids
    naive, se = _treatment_fit(_design(scm, sample, declared), y)
    oracle, _ = _treatment_fit(_design(scm, sample, (*declared, *scm.latent_ids)), y)
    combined = se * math.sqrt(1.0 + 1.0 / share)
    return abs(naive - oracle) / combined


def calibrated_confounder(scm: Scm, sample: CleanSample, target: float, share: float) -> Scm | None:
    """Generator 3's confounded extract: the hidden confounder's weight on Y set so
    that the extract's bias is `target` combined SEs, and Y's own noise lowered so
    that the confounder adds no outcome variance (Var(w h) + Var(noise) is the noise
    variance the SCM drew): neither file's outcome spread then tells the classes
    apart. From the sample drawn with the SCM's own weight w0: the bias of the
    adjusted estimate is w * delta exactly (delta: T's coefficient for h on the
    declared design), and its residual variance is s0^2 - w^2 (1 - v_h) (s0^2 that of
    Y without the confounder, v_h h's residual variance), so w solves
    w |delta| = target * c * q * sqrt(s0^2 - w^2 (1 - v_h)), c = sqrt(1 + 1/share),
    q the design's SE factor. None when the weight would leave Y no noise of its own."""
    hidden = "h0"
    edge = next(e for e in scm.in_edges(OUTCOME_ID) if e.parent == hidden)
    w0 = edge.weights[0]
    outcome = scm.node(OUTCOME_ID)
    h = sample.columns[hidden]
    design = _design(scm, sample, scm.pre_treatment_ids)
    inverse = np.linalg.pinv(design.T @ design)
    q2 = float(inverse[1, 1])
    delta_fit, *_ = np.linalg.lstsq(design, h, rcond=None)
    delta = float(delta_fit[1])
    v_h = float(np.var(h - design @ delta_fit))
    base = sample.columns[OUTCOME_ID] - w0 * h
    base_fit, *_ = np.linalg.lstsq(design, base, rcond=None)
    s0_2 = float(np.var(base - design @ base_fit))
    c2 = 1.0 + 1.0 / share
    k = target * target * c2 * q2
    w2 = k * s0_2 / (delta * delta + k * (1.0 - v_h))
    noise2 = outcome.noise_sd**2 - w2
    if not (math.isfinite(w2) and noise2 > 0.1 * outcome.noise_sd**2):
        return None
    weight = math.copysign(math.sqrt(w2), w0)
    edges = tuple(dataclasses.replace(e, weights=(weight,)) if e is edge else e for e in scm.edges)
    nodes = tuple(
        dataclasses.replace(n, noise_sd=math.sqrt(noise2)) if n.id == OUTCOME_ID else n
        for n in scm.nodes
    )
    return dataclasses.replace(scm, nodes=nodes, edges=edges)
