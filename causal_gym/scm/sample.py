"""Sample a clean observational frame from an SCM with the task's `data` stream.

Columns come back keyed by internal node id (names are applied later by staging),
discrete nodes as integer codes, plus the true propensity for the positivity check.
No BLAS: each node is an elementwise sum in a fixed order, so the same stream gives
the same doubles on every machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind, Role, Scm


@dataclass(frozen=True)
class CleanSample:
    columns: dict[str, np.ndarray]
    propensity: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.propensity.shape[0])


def _contribution(values: np.ndarray, weights: tuple[float, ...]) -> np.ndarray:
    if len(weights) == 1:
        return weights[0] * values
    return np.asarray(weights, dtype=np.float64)[values]


def sample_clean(
    scm: Scm,
    n_rows: int,
    rng: np.random.Generator,
    marginals: Mapping[str, Marginal],
    randomized: bool = False,
    treatment: int | None = None,
    until_propensity: bool = False,
) -> CleanSample:
    """`marginals` gives continuous roots their documented kind (standardized draws in
    place of the default standard normal); nodes with parents must not have one.
    `randomized` assigns the treatment by a fair coin instead of its equation (the
    obs_vs_rct family's trial: same population, same outcome equation). `treatment`
    sets it for every row, do(T = treatment), drawing exactly what an observational
    sample draws: two calls with one seed give paired potential outcomes.
    `until_propensity` stops once the treatment's propensity is known: the nodes drawn
    before it (every parent of T) hold exactly the values a whole sample would, and
    nothing after them is drawn (the efficiency bound needs no more). A real-tier SCM
    first draws the rows of its table (scm/real_roots.py); its bound roots read them."""
    if n_rows < 1:
        raise ValueError(f"cannot sample {n_rows} rows")
    for node_id in marginals:
        if scm.in_edges(node_id) or scm.node(node_id).kind is not Kind.CONTINUOUS:
            raise ValueError(f"node {node_id} is not a continuous root; it cannot take a marginal")
    columns: dict[str, np.ndarray] = {}
    propensity = np.full(n_rows, np.nan)
    real = scm.real.values if scm.real is not None else {}
    rows = scm.real.rows(rng, n_rows) if scm.real is not None else None
    for node in scm.nodes:
        if node.id in real:  # a real table's column, row by row (scm/real_roots.py)
            columns[node.id] = real[node.id][rows]
            continue
        if node.kind is Kind.CATEGORICAL:
            columns[node.id] = rng.choice(len(node.level_probs), size=n_rows, p=node.level_probs)
            continue
        if node.kind is Kind.BINARY:
            columns[node.id] = (rng.random(n_rows) < node.prob).astype(np.int64)
            continue
        if node.id in marginals:
            columns[node.id] = marginals[node.id].draw(rng, n_rows)
            continue
        index = np.full(n_rows, node.intercept)
        for edge in scm.in_edges(node.id):
            index = index + _contribution(columns[edge.parent], edge.weights)
        if scm.nonlinear is not None and node.id == TREATMENT_ID:
            index = index + scm.nonlinear.propensity_index(columns)
        if node.role is Role.TREATMENT:
            low, high = scm.propensity_band
            propensity = np.clip(1.0 / (1.0 + np.exp(-index)), low, high)
            if randomized:
                propensity = np.full(n_rows, 0.5)
            if until_propensity:
                return CleanSample(columns, propensity)
            assigned = (rng.random(n_rows) < propensity).astype(np.int64)
            columns[TREATMENT_ID] = assigned if treatment is None else np.full(n_rows, treatment)
        else:
            if node.id == OUTCOME_ID and scm.modifier is not None:
                gamma = np.asarray(scm.interaction, dtype=np.float64)
                index = index + gamma[columns[scm.modifier]] * columns[TREATMENT_ID]
            if node.id == OUTCOME_ID and scm.nonlinear is not None:
                index = index + scm.nonlinear.outcome_index(columns)
                index = index + scm.nonlinear.effect_shift(columns) * columns[TREATMENT_ID]
            columns[node.id] = index + node.noise_sd * rng.standard_normal(n_rows)
    return CleanSample(columns, propensity)
