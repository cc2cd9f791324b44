"""The expert tier's reward anchor: the semiparametric efficiency bound for the ATE,
evaluated on the hidden SCM at the staged size.

Why the bound and not the reference's own standard error: the expert reference is a
machine-learning estimator whose finite-sample spread depends on its tuning, and an
anchor taken from it would reward agreeing with that tuning. The bound is a property
of the task alone (the best interval any regular, honest analyst can hope for), so
the reward's optimum (w = r) does not move when someone writes a better estimator.
Why not the spread over keyed re-simulations: that needs dozens of reference fits
per task, far over the 2 s generation budget.

For the ATE with adjustment set X (every declared pre-treatment column) the bound is

    V = Var(tau(X)) + E[ sigma1^2(X) / e(X) + sigma0^2(X) / (1 - e(X)) ]

with tau(X) = E[Y(1) - Y(0) | X], e(X) = P(T = 1 | X) and sigma_t^2(X) = Var(Y | T = t, X).
In these SCMs every parent of T is a declared column, so e(X) is the SCM's clipped
propensity; Y's conditional variance is the same in both arms and for every X (its
own noise, what the declared columns leave unknown about its latent parents, and the
noise of mediators), computed exactly below. The two expectations over X come from a
keyed Monte Carlo sample of ANCHOR_DRAWS rows, drawn only as far as the propensity
(sample_clean's `until_propensity`). 50,000 rows: V's relative SD across seeds is
0.15% on average (at most 0.22%, 12 eval-expert-v1 tasks x 12 seeds), so r moves by
under 0.1%; 200,000 (the first version) cost four times as much, a third of a
stream head's CPU on the default train mix, for half that spread.
r = 2 z_0.95 sqrt(V / n), n the rows an honest analysis keeps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from causal_gym.errors import GenerationError
from causal_gym.reference.analyst import Z
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Role, Scm, Timing
from causal_gym.scm.sample import sample_clean

ANCHOR_DRAWS = 50_000


def latent_residual_variance(scm: Scm, latent: str) -> float:
    """Var(latent | declared columns) for a standard normal latent root with at most
    one observed child, C = w * latent + (observed parents) + s * noise."""
    children = [
        e for e in scm.edges if e.parent == latent and scm.node(e.child).timing is Timing.PRE
    ]
    if not children:
        return 1.0
    if len(children) > 1 or scm.in_edges(latent):
        raise GenerationError(f"latent {latent}: the anchor handles one observed child only")
    (edge,) = children
    child = scm.node(edge.child)
    others = [e.parent for e in scm.in_edges(child.id) if e.parent != latent]
    if any(not scm.node(p).observed for p in others):
        raise GenerationError(f"latent {latent}: its child has another latent parent")
    w, s = edge.weights[0], child.noise_sd
    return s * s / (w * w + s * s)


def outcome_noise_variance(scm: Scm, given: frozenset[str] = frozenset()) -> float:
    """Var(Y | T, every declared pre-treatment column and the post-treatment columns
    `given`, mediation's declared mediator): the same for every row."""
    variance = scm.node(OUTCOME_ID).noise_sd ** 2
    for edge in scm.in_edges(OUTCOME_ID):
        parent = scm.node(edge.parent)
        weight = edge.weights[0]
        if parent.id in given:
            continue
        if not parent.observed:
            variance += weight * weight * latent_residual_variance(scm, parent.id)
        elif parent.role is Role.MEDIATOR:
            if [e.parent for e in scm.in_edges(parent.id)] != [TREATMENT_ID]:
                raise GenerationError(f"mediator {parent.id} has a parent besides T")
            variance += weight * weight * parent.noise_sd**2
        elif parent.timing is not Timing.PRE and parent.id != TREATMENT_ID:
            raise GenerationError(f"outcome parent {parent.id} is neither declared nor handled")
    return variance


def efficiency_bound(
    scm: Scm, marginals: Mapping[str, Marginal], rng: np.random.Generator
) -> float:
    """V above (per row), from the keyed `anchor` stream."""
    if scm.nonlinear is None:
        raise GenerationError("the efficiency-bound anchor is for expert SCMs")
    sample = sample_clean(scm, ANCHOR_DRAWS, rng, marginals, until_propensity=True)
    e = sample.propensity
    effect_variance = float(np.var(scm.nonlinear.effect_shift(sample.columns)))
    inverse_weights = float(np.mean(1.0 / e + 1.0 / (1.0 - e)))
    return effect_variance + outcome_noise_variance(scm) * inverse_weights


def anchor_width(bound: float, n_used: int) -> float:
    """r: the width of a 90% interval whose standard error is the bound's."""
    return 2.0 * Z * math.sqrt(bound / n_used)
