"""Exact means of the expert tier's terms under the roots' known marginals.

A root is drawn from its marginal and standardized with the marginal's exact mean and
SD (scm/marginals.py), and roots are independent, so a term's mean is a product of
one-dimensional expectations: a tail probability for a threshold, a quadrature (a sum
over the support, for the discrete kinds) for a bump or a tanh. The numerical error
is below 1e-9, far under the 1e-4 that the truth needs (a hundredth of the smallest
reference standard error); tests/test_expert.py checks each kind against a large
Monte Carlo.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from causal_gym.scm.marginals import Marginal
from causal_gym.scm.nonlinear import TERM_SCALE, Nonlinearity, Term, TermKind, factor
from causal_gym.scm.real_roots import RealRoots


def _distribution(marginal: Marginal | None) -> Any:
    """The scipy distribution of a root's staged value (None: a standard normal)."""
    from scipy import stats

    if marginal is None:
        return stats.norm(0.0, 1.0)
    p, family = marginal.params, marginal.family
    if family == "normal":
        return stats.norm(marginal.mean, marginal.sd)
    if family == "gamma":
        return stats.gamma(p[0], scale=p[1])
    if family == "beta":
        return stats.beta(p[0], p[1], loc=marginal.low, scale=p[2])
    if family == "negative_binomial":
        return stats.nbinom(p[0], p[1])
    if family == "binomial":
        return stats.binom(int(p[0]), p[1], loc=marginal.low)
    if family == "poisson":
        return stats.poisson(p[0])
    if family == "beta_binomial":
        return stats.betabinom(int(p[0]), p[1], p[2], loc=marginal.low)
    raise ValueError(f"unknown marginal family {family!r}")


def factor_mean(kind: TermKind, threshold: float, marginal: Marginal | None) -> float:
    """E[factor(standardized root)] under the root's marginal."""
    mean, sd = (0.0, 1.0) if marginal is None else (marginal.mean, marginal.sd)
    dist = _distribution(marginal)
    if kind is TermKind.STEP:
        cut = mean + sd * threshold
        discrete = marginal is not None and marginal.family not in ("normal", "gamma", "beta")
        return float(dist.sf(math.floor(cut)) if discrete else dist.sf(cut))
    if marginal is None or marginal.family in ("normal", "gamma", "beta"):
        return _piecewise_mean(kind, threshold, dist, mean, sd)
    top = int(dist.isf(1e-16)) + 1
    support = np.arange(int(dist.support()[0]), top + 1, dtype=np.float64)
    return float(np.sum(factor(kind, threshold, (support - mean) / sd) * dist.pmf(support)))


#: Probability levels that cut a continuous marginal into pieces of known mass; the
#: mass outside the outermost two (2e-13) is left out, so with |factor| <= 1 the
#: error is at most 2e-13.
_LOWER = np.array([1e-13, 1e-9, 1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5])
_UPPER = np.array([0.4, 0.3, 0.2, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-6, 1e-9, 1e-13])
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)


def _piecewise_mean(kind: TermKind, threshold: float, dist: Any, mean: float, sd: float) -> float:
    """Gauss-Legendre quadrature (48 nodes) on each piece between quantiles. Why not one
    adaptive quadrature over the whole support: a peaked density (a skewed gamma far
    from 0) can slip between its sample points, and it then reports a mean near 0
    with a small error estimate."""
    edges = np.concatenate([dist.ppf(_LOWER), dist.isf(_UPPER)])
    edges = np.unique(edges[np.isfinite(edges)])
    low, high = edges[:-1, None], edges[1:, None]
    points = (low + high) / 2 + (high - low) / 2 * _NODES[None, :]
    values = factor(kind, threshold, (points - mean) / sd) * dist.pdf(points)
    return float(np.sum((high - low)[:, 0] / 2 * (values @ _WEIGHTS)))


def term_mean(term: Term, marginals: Mapping[str, Marginal]) -> float:
    """A term's exact mean: its scale times the product of its factors' means (the
    inputs are distinct independent roots)."""
    if len(set(term.inputs)) != len(term.inputs):
        raise ValueError(f"a term's inputs must be distinct roots, got {term.inputs}")
    mean = TERM_SCALE[term.kind]
    for root in term.inputs:
        mean *= factor_mean(term.kind, term.threshold, marginals.get(root))
    return mean


def centered(
    nonlinear: Nonlinearity, marginals: Mapping[str, Marginal], real: RealRoots | None = None
) -> Nonlinearity:
    """The same terms, each centered by its exact mean under the roots' marginals
    (a root without one is standard normal). A term of a real table's columns is
    centered by its mean over the table's rows, the population they are: exact too,
    and right for correlated inputs."""
    bound = real.values if real is not None else {}

    def mean(term: Term) -> float:
        if not any(root in bound for root in term.inputs):
            return term_mean(term, marginals)
        if len(set(term.inputs)) != len(term.inputs):
            raise ValueError(f"a term's inputs must be distinct roots, got {term.inputs}")
        # the table's factors together (correlated), times the drawn roots' means
        # (independent of the table and of each other)
        table_part = np.ones(len(next(iter(bound.values()))))
        value = TERM_SCALE[term.kind]
        for root in term.inputs:
            if root in bound:
                table_part = table_part * factor(term.kind, term.threshold, bound[root])
            else:
                value *= factor_mean(term.kind, term.threshold, marginals.get(root))
        return value * float(np.mean(table_part))

    terms = tuple(dataclasses.replace(term, center=mean(term)) for term in nonlinear.terms)
    return dataclasses.replace(nonlinear, terms=terms)
