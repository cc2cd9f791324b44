"""The linear tiers' reward anchor: the width of OLS on the optimal valid adjustment
set, evaluated on the hidden SCM at the staged size (reward version 2).

Why not the reference's own width (reward version 1): the reference adjusts for every
declared pre-treatment column, instruments included, and an anchor taken from its
own standard error put the reward's kink exactly at its 90% width. An analyst who left
the instruments out (a real skill: Henckel, Perkovic and Maathuis 2019 show that it
can only shrink the variance) had a narrower honest interval and paid for it. The
anchor is now a property of the task: the smallest asymptotic variance any OLS on a
valid adjustment set of declared columns can reach, so no honest OLS interval falls
below it, and the interval score at its proper 90% level makes each analyst's own
calibrated interval its optimum.

In these SCMs, for a valid set S of declared pre-treatment columns, E[Y | T, S] is
exactly linear and the residual is homoskedastic, so OLS of Y on T and S has

    avar = sigma^2(S) / R_T(S)   (per row)

sigma^2(S) = Var(Y | T, S) and R_T(S) the residual variance of the linear projection
of T on S (categoricals as dummies). The valid sets worth comparing are few: every
confounder, blocker and outcome predictor stays (each is needed, or lowers sigma^2
without touching R_T); instruments and irrelevant columns go (Y is independent of
them given T and the rest, so they only take variance from T); and each collider
decoy goes in only with its parent (the decoy alone opens a path), where it lowers
sigma^2 by what it tells about its latent and its parent lowers R_T. So S* is the
best of 2^decoys sets (at most 4). sigma^2 is exact (efficiency.outcome_noise_variance
for the full set, plus each left-out decoy's latent share); R_T comes from the keyed
Monte Carlo sample the expert tier's bound uses (the `anchor` stream, so no staged
byte moves): R_T = p (1 - p) - Cov(X, e)' Cov(X)^-1 Cov(X, e), with e the propensity
and p its mean, needing only T's parents in S (the rest are uncorrelated with T's
projection residual).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from causal_gym.errors import GenerationError
from causal_gym.generate.efficiency import (
    ANCHOR_DRAWS,
    _latent_residual_variance,
    outcome_noise_variance,
)
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind, Role, Scm
from causal_gym.scm.sample import sample_clean

#: Roles the optimal set keeps whatever else it holds.
_KEPT = frozenset({Role.CONFOUNDER, Role.BLOCKER, Role.PREDICTOR})
#: Roles it never holds.
_LEFT_OUT = frozenset({Role.INSTRUMENT, Role.IRRELEVANT})


@dataclass(frozen=True)
class DecoyPair:
    """A collider decoy with its observed parent and its latent (and the latent's
    weight on Y): in or out of the set together."""

    decoy: str
    parent: str
    latent: str
    latent_weight: float


@dataclass(frozen=True)
class OlsAnchor:
    """The optimal set's asymptotic variance per row, and the set itself."""

    variance: float
    adjustment_set: tuple[str, ...]

    def width(self, n_used: int) -> float:
        """r: the 90% width of an interval whose SE is the optimal OLS's at n rows."""
        return 2.0 * Z * math.sqrt(self.variance / n_used)


def decoy_pairs(scm: Scm) -> tuple[DecoyPair, ...]:
    pairs = []
    for decoy in scm.ids_with(Role.DECOY):
        parents = {scm.node(e.parent).role: e.parent for e in scm.in_edges(decoy)}
        if set(parents) != {Role.DECOY_PARENT, Role.DECOY_LATENT}:
            raise GenerationError(f"decoy {decoy}: the anchor needs one parent and one latent")
        latent = parents[Role.DECOY_LATENT]
        weight = sum(e.weights[0] for e in scm.in_edges(OUTCOME_ID) if e.parent == latent)
        pairs.append(DecoyPair(decoy, parents[Role.DECOY_PARENT], latent, weight))
    return tuple(pairs)


def _design(scm: Scm, columns: Mapping[str, np.ndarray], ids: list[str]) -> np.ndarray:
    """The columns of `ids` as regressors (a categorical as dummies for levels 1..)."""
    parts: list[np.ndarray] = []
    for node_id in ids:
        node, values = scm.node(node_id), columns[node_id]
        if node.kind is Kind.CATEGORICAL:
            parts += [
                (values == level).astype(np.float64) for level in range(1, len(node.level_probs))
            ]
        else:
            parts.append(values.astype(np.float64))
    if not parts:
        return np.empty((len(next(iter(columns.values()))), 0))
    return np.column_stack(parts)


def _treatment_residual_variance(x: np.ndarray, e: np.ndarray) -> float:
    """Var(T) minus what the linear projection on x explains, from propensities."""
    p = float(np.mean(e))
    total = p * (1.0 - p)
    if x.shape[1] == 0:
        return total
    centred = x - x.mean(axis=0)
    cov_x = centred.T @ centred / len(e)
    cov_xe = centred.T @ (e - p) / len(e)
    explained = float(cov_xe @ np.linalg.solve(cov_x, cov_xe))
    return total - explained


def ols_anchor(scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator) -> OlsAnchor:
    """The optimal valid set's OLS variance per row, from the keyed `anchor` stream."""
    if scm.nonlinear is not None:
        raise GenerationError("the OLS anchor is for the linear tiers (expert: efficiency.py)")
    declared = scm.pre_treatment_ids
    roles = {node_id: scm.node(node_id).role for node_id in declared}
    pairs = decoy_pairs(scm)
    paired = {p.decoy for p in pairs} | {p.parent for p in pairs}
    unknown = [i for i in declared if roles[i] not in _KEPT | _LEFT_OUT and i not in paired]
    if unknown:
        raise GenerationError(f"the OLS anchor does not know the role of {', '.join(unknown)}")
    kept = [i for i in declared if roles[i] in _KEPT]
    full_variance = outcome_noise_variance(scm)
    sample = sample_clean(scm, ANCHOR_DRAWS, rng, marginals, until_propensity=True)
    t_parents = {e.parent for e in scm.in_edges(TREATMENT_ID)}
    best: OlsAnchor | None = None
    for chosen in itertools.product((True, False), repeat=len(pairs)):
        members = list(kept)
        sigma2 = full_variance
        for pair, inside in zip(pairs, chosen, strict=True):
            if inside:
                members += [pair.parent, pair.decoy]
            else:
                resid = _latent_residual_variance(scm, pair.latent)
                sigma2 += pair.latent_weight**2 * (1.0 - resid)
        regressors = [i for i in members if i in t_parents]
        r_t = _treatment_residual_variance(
            _design(scm, sample.columns, regressors), sample.propensity
        )
        if not r_t > 0:
            raise GenerationError("the treatment has no variance left given the adjustment set")
        candidate = OlsAnchor(sigma2 / r_t, tuple(sorted(members)))
        if best is None or candidate.variance < best.variance:
            best = candidate
    assert best is not None  # product() of zero pairs yields one empty choice
    return best
