"""The expert tier's nonlinear part: terms in observed confounders that enter the
treatment's propensity, the outcome and the treatment effect.

A linear SCM makes the honest adjusted OLS unbiased by construction; here one shared
set of terms (a threshold, a bump, a smooth interaction) moves both who is treated
and how the outcome looks, so adjusting linearly for the same columns leaves
confounding behind, and the effect itself varies with the terms. Every term reads
only observed pre-treatment roots that already point at both T and Y, so the graph
(and with it the backdoor certificate) is unchanged.

Each term is centered by its exact expectation under the roots' known, independent
marginals (scm/expectations.py) before any sampling, so the effect terms average to
zero and the population ATE stays `Scm.total_effect()`, exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np


class TermKind(StrEnum):
    STEP = "step"  # a threshold: 1[x > c]
    BUMP = "bump"  # smooth curvature, symmetric around 0: exp(-x^2 / 2)
    PRODUCT = "product"  # a smooth interaction: tanh(x) * tanh(z)


#: Multipliers that give each raw term a standard deviation near 1 for a standard
#: normal root, so one weight range means one strength for every kind.
TERM_SCALE = {TermKind.STEP: 2.0, TermKind.BUMP: 3.5, TermKind.PRODUCT: 2.5}


def factor(kind: TermKind, threshold: float, x: np.ndarray | float) -> np.ndarray:
    """The one-input factor of a term (a product multiplies two of them)."""
    values = np.asarray(x, dtype=np.float64)
    if kind is TermKind.STEP:
        return (values > threshold).astype(np.float64)
    if kind is TermKind.BUMP:
        return np.exp(-0.5 * values * values)
    return np.tanh(values)


@dataclass(frozen=True)
class Term:
    """One nonlinear term of standardized root values; `center` is its exact mean."""

    kind: TermKind
    inputs: tuple[str, ...]
    threshold: float = 0.0
    center: float | None = None

    def __post_init__(self) -> None:
        want = 2 if self.kind is TermKind.PRODUCT else 1
        if len(self.inputs) != want:
            raise ValueError(f"a {self.kind} term reads {want} inputs, got {self.inputs}")

    def raw(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        value = factor(self.kind, self.threshold, columns[self.inputs[0]])
        for other in self.inputs[1:]:
            value = value * factor(self.kind, self.threshold, columns[other])
        return TERM_SCALE[self.kind] * value

    def value(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        if self.center is None:
            raise ValueError("a nonlinear term must be centered before sampling")
        return self.raw(columns) - self.center


@dataclass(frozen=True)
class Nonlinearity:
    """Weights of each centered term in T's logit index, in Y, and in the effect of T
    on Y (Y gains T * sum(effect_k * term_k))."""

    terms: tuple[Term, ...]
    propensity: tuple[float, ...]
    outcome: tuple[float, ...]
    effect: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.terms)
        if not n or not len(self.propensity) == len(self.outcome) == len(self.effect) == n:
            raise ValueError("a nonlinearity needs terms and one weight per term in each place")

    @property
    def inputs(self) -> frozenset[str]:
        return frozenset(i for term in self.terms for i in term.inputs)

    @property
    def centered(self) -> bool:
        return all(term.center is not None for term in self.terms)

    def _sum(self, weights: tuple[float, ...], columns: Mapping[str, np.ndarray]) -> np.ndarray:
        total = np.zeros_like(columns[self.terms[0].inputs[0]], dtype=np.float64)
        for weight, term in zip(weights, self.terms, strict=True):
            if weight != 0.0:
                total = total + weight * term.value(columns)
        return total

    def propensity_index(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        return self._sum(self.propensity, columns)

    def outcome_index(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        return self._sum(self.outcome, columns)

    def effect_shift(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Each row's treatment effect minus the average one (mean exactly zero)."""
        return self._sum(self.effect, columns)


def draw_nonlinearity(
    sources: list[str], no_effect: bool, rng: np.random.Generator
) -> Nonlinearity:
    """Terms over `sources` (continuous confounder roots, at least one): a threshold,
    a bump and, given two sources, an interaction. One shared component drives the
    propensity and the outcome; one or two terms shift the effect, none when the task
    has no effect at all."""
    if not sources:
        raise ValueError("the expert tier needs a continuous confounder root")
    order = [sources[int(i)] for i in rng.permutation(len(sources))]
    first, second = order[0], order[1 % len(order)]
    terms = [
        Term(TermKind.STEP, (first,), threshold=float(rng.uniform(-0.6, 0.6))),
        Term(TermKind.BUMP, (second,)),
    ]
    if len(order) > 1:
        terms.append(Term(TermKind.PRODUCT, (order[0], order[-1] if len(order) > 2 else second)))

    def signed(low: float, high: float) -> float:
        return float(rng.uniform(low, high) * rng.choice((-1.0, 1.0)))

    shared = [signed(0.5, 1.0) for _ in terms]
    to_t, to_y = float(rng.uniform(0.3, 0.5)), signed(0.3, 0.5)
    modifies = rng.permutation(len(terms))[: int(rng.integers(1, 3))]
    effect = [signed(0.1, 0.3) if i in modifies else 0.0 for i in range(len(terms))]
    if no_effect:
        effect = [0.0] * len(terms)
    return Nonlinearity(
        tuple(terms),
        tuple(to_t * w for w in shared),
        tuple(to_y * w for w in shared),
        tuple(effect),
    )
