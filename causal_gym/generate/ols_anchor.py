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
Monte Carlo from the `anchor` stream (as the expert tier's bound, so no staged byte
moves): R_T = p (1 - p) - Cov(X, e)' Cov(X)^-1 Cov(X, e), with e the propensity and
p its mean, needing only T's parents in S (the rest are uncorrelated with T's
projection residual), so only T and its ancestors are drawn. The real tier's roots
are a table's columns, correlated as the study's are, so there X is all of S, drawn
from the table's rows with replacement (its population).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import networkx as nx
import numpy as np

from causal_gym.errors import GenerationError
from causal_gym.generate.efficiency import latent_residual_variance, outcome_noise_variance
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind, Role, Scm
from causal_gym.scm.sample import sample_clean

#: Rows of the keyed Monte Carlo for R_T, drawn for T's ancestors only. The anchor
#: variance's relative SD across seeds is 0.14% on average at this size (at most
#: 0.23%, 12 train adjustment tasks x 12 seeds), so r moves by about 0.1%; 50,000
#: rows of every pre-treatment column (the expert bound's draw) made a linear task
#: cost 2.4x what it costs without the anchor; now 1.3-1.4x (scripts/bench_ols_anchor.py,
#: docs/benchmarks/bench_ols_anchor.txt).
OLS_ANCHOR_DRAWS = 20_000
#: Roles the optimal set keeps whatever else it holds.
_KEPT = frozenset({Role.CONFOUNDER, Role.BLOCKER, Role.PREDICTOR, Role.MODIFIER})
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

    def low_width(self, n_used: int) -> float:
        """The real tier's r: the 5% quantile of the optimal OLS's own estimated 90%
        width at n rows, whose residual variance is a chi-square draw around the true
        one (the model's noise is Gaussian). On the real tier the honest set is nearly
        the optimal one (width / r 1.01 on average), so r itself put the kink under
        40% of honest answers and a 91% interval paid (+0.0013 a task over 3,600,
        z 5.8); a low quantile of the width, as the design families' r is, does not."""
        from scipy.stats import chi2

        df = max(n_used - len(self.adjustment_set) - 2, 1)
        return self.width(n_used) * math.sqrt(float(chi2.ppf(0.05, df)) / df)


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


def design_matrix(scm: Scm, columns: Mapping[str, np.ndarray], ids: list[str]) -> np.ndarray:
    """The columns of `ids` as regressors (a categorical as dummies for levels 1..)."""
    parts: list[np.ndarray] = []
    for node_id in ids:
        node, values = scm.node(node_id), columns[node_id]
        if node.kind is Kind.CATEGORICAL:
            levels = range(1, len(node.level_probs))
            parts += [(values == level).astype(np.float64) for level in levels]
        else:
            parts.append(values.astype(np.float64))
    if not parts:
        return np.empty((len(next(iter(columns.values()))), 0))
    return np.column_stack(parts)


@dataclass(frozen=True)
class _Moments:
    """Second moments of T's parents and the propensity, computed once: every
    candidate set's R_T is a solve on a sub-block of them."""

    spans: dict[str, slice]  # a parent's regressor columns
    cov_x: np.ndarray
    cov_xe: np.ndarray
    var_t: float

    def residual_variance(self, parents: list[str]) -> float:
        """Var(T) minus what the linear projection on `parents` explains."""
        index = [i for p in parents for i in range(self.spans[p].start, self.spans[p].stop)]
        if not index:
            return self.var_t
        sub, cross = self.cov_x[np.ix_(index, index)], self.cov_xe[index]
        return self.var_t - float(cross @ np.linalg.solve(sub, cross))


def _treatment_ancestry(scm: Scm) -> Scm:
    """The SCM cut down to T and its ancestors: all R_T needs, and less than half of
    the draws (outcome predictors and irrelevant roots are most of the roots)."""
    keep = nx.ancestors(scm.graph, TREATMENT_ID) | {TREATMENT_ID}
    nodes = tuple(n for n in scm.nodes if n.id in keep)
    edges = tuple(e for e in scm.edges if e.child in keep)
    real = scm.real.restricted(keep) if scm.real is not None else None
    return Scm(nodes, edges, scm.propensity_band, real=real)


def _moments(
    scm: Scm, columns: Mapping[str, np.ndarray], e: np.ndarray, parents: list[str]
) -> _Moments:
    spans, start = {}, 0
    for parent in parents:
        node = scm.node(parent)
        width = len(node.level_probs) - 1 if node.kind is Kind.CATEGORICAL else 1
        spans[parent], start = slice(start, start + width), start + width
    x = design_matrix(scm, columns, parents)
    p = float(np.mean(e))
    centred = x - x.mean(axis=0)
    n = len(e)
    return _Moments(spans, centred.T @ centred / n, centred.T @ (e - p) / n, p * (1.0 - p))


@dataclass(frozen=True)
class CandidateSet:
    """A valid adjustment set worth comparing: the kept roles plus the decoy pairs put
    in. `left_out` holds what Var(Y | T, set) adds for each pair left out (its latent's
    share), in the order the pairs are drawn."""

    members: tuple[str, ...]
    left_out: tuple[float, ...]

    def outcome_variance(self, base: float) -> float:
        """Var(Y | T, the set) when Var(Y | T, every declared column) is `base`."""
        sigma2 = base
        for extra in self.left_out:
            sigma2 += extra
        return sigma2


def candidate_sets(scm: Scm) -> tuple[CandidateSet, ...]:
    """The 2^decoys valid sets the optimal one is among (the module's docstring)."""
    declared = scm.pre_treatment_ids
    roles = {node_id: scm.node(node_id).role for node_id in declared}
    pairs = decoy_pairs(scm)
    paired = {p.decoy for p in pairs} | {p.parent for p in pairs}
    unknown = [i for i in declared if roles[i] not in _KEPT | _LEFT_OUT and i not in paired]
    if unknown:
        raise GenerationError(f"the OLS anchor does not know the role of {', '.join(unknown)}")
    kept = [i for i in declared if roles[i] in _KEPT]
    sets = []
    for chosen in itertools.product((True, False), repeat=len(pairs)):
        members = list(kept)
        left_out = []
        for pair, inside in zip(pairs, chosen, strict=True):
            if inside:
                members += [pair.parent, pair.decoy]
            else:
                resid = latent_residual_variance(scm, pair.latent)
                left_out.append(pair.latent_weight**2 * (1.0 - resid))
        sets.append(CandidateSet(tuple(members), tuple(left_out)))
    return tuple(sets)  # product() of zero pairs yields one empty choice


@dataclass(frozen=True)
class TreatmentSide:
    """A keyed draw of T's side of the SCM: T's parents (or, on the real tier, every
    declared column) and the propensity; `moments` serves every candidate set's R_T."""

    scm: Scm
    regressors: tuple[str, ...]
    columns: Mapping[str, np.ndarray]
    propensity: np.ndarray
    moments: _Moments


def draw_treatment_side(
    scm: Scm,
    marginals: Mapping[str, Marginal],
    rng: np.random.Generator,
    draws: int = OLS_ANCHOR_DRAWS,
) -> TreatmentSide:
    """`draws` rows of T's ancestry, from the keyed `anchor` stream."""
    if scm.nonlinear is not None:
        raise GenerationError("the OLS anchor is for the linear tiers (expert: efficiency.py)")
    if scm.real is None:
        treatment_side = _treatment_ancestry(scm)
        regressors = [edge.parent for edge in scm.in_edges(TREATMENT_ID)]
    else:  # a real table's columns go together: any of them may explain T's index
        treatment_side, regressors = scm, list(scm.pre_treatment_ids)
    drawn = {n.id for n in treatment_side.nodes}
    own = {node_id: m for node_id, m in marginals.items() if node_id in drawn}
    sample = sample_clean(treatment_side, draws, rng, own, until_propensity=True)
    moments = _moments(treatment_side, sample.columns, sample.propensity, regressors)
    return TreatmentSide(
        treatment_side, tuple(regressors), sample.columns, sample.propensity, moments
    )


def treatment_residual(side: TreatmentSide, members: tuple[str, ...]) -> float:
    """R_T(S): T's residual variance after its linear projection on the set."""
    r_t = side.moments.residual_variance([i for i in members if i in side.moments.spans])
    if not r_t > 0:
        raise GenerationError("the treatment has no variance left given the adjustment set")
    return r_t


def ols_anchor(scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator) -> OlsAnchor:
    """The optimal valid set's OLS variance per row, from the keyed `anchor` stream."""
    sets = candidate_sets(scm)  # first: an unknown role is refused before any draw
    side = draw_treatment_side(scm, marginals, rng)
    full_variance = outcome_noise_variance(scm)
    best: OlsAnchor | None = None
    for candidate in sets:
        sigma2 = candidate.outcome_variance(full_variance)
        r_t = treatment_residual(side, candidate.members)
        anchor = OlsAnchor(sigma2 / r_t, tuple(sorted(candidate.members)))
        if best is None or anchor.variance < best.variance:
            best = anchor
    assert best is not None
    return best
