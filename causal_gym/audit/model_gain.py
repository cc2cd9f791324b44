"""The model-based check: what a posterior probe expects to gain under its own posterior.

A scored difference, probe minus reference on one task, carries the noise of where
the one truth fell: the interval score's miss penalty makes it heavy-tailed, and a
slice needs thousands of tasks before a gain of 0.005 shows. The probe itself says
what it believes: a posterior over the truth given the staged data. Integrating both
answers' scores over that posterior gives the gain the probe expects,

    E_post[R(probe) - R(reference)],

which has no truth noise left, only the spread of the posterior's own shape from task
to task. When the probe's prior is the generator's (what the bayes-prior probe
assumes), the expectation averaged over tasks estimates the same gain as the scored
difference, without bias, on a few hundred tasks. The audit reports both, side by
side (issue 41).

The integral is a quadrature: POINTS stratified quantiles of the posterior (an atom
at zero plus truncated normals, reference/posterior.py), computed in closed form with
numpy; each point is scored by the real scorer (scoring/reward.py's estimand_score)
against the task's own anchor and scale.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy.special import ndtr, ndtri

from causal_gym.errors import GenerationError
from causal_gym.estimand import Estimand
from causal_gym.hooks import hooks_of
from causal_gym.reference.posterior import Posterior, Prior
from causal_gym.scoring.reward import ScoreRecord, estimand_score
from causal_gym.scoring.validate import Accepted, validate_submission
from causal_gym.task import Task

#: Quadrature points per posterior (stratified: the i-th is the (i + 0.5) / POINTS
#: quantile). Measured against 40,000 points on 150 random posteriors (a gapped prior,
#: null_detect's atom and pieces, a uniform one): 1.2e-4 of a reward off on average,
#: -3e-5 signed, at most 1.1e-3 where a cell straddles the prior's gap or atom (the
#: quantile function jumps there). Averaged over a slice's tasks that is far below the
#: 0.005 the check is about; allocating points per piece would remove the jumps' share.
POINTS = 400
Triple = tuple[float, float, float]  # (estimate, lower, upper)


def posterior_points(post: Posterior, points: int = POINTS) -> np.ndarray:
    """The posterior's (i + 0.5) / points quantiles, i < points, in order (an atom at
    zero holds its share of them). Each truncated-normal piece is inverted on the side
    of the normal where its tail probabilities are not rounded to 1."""
    # The pieces in order along the line, the atom (None) between the negative and
    # the positive ones.
    pieces = sorted(post.segments, key=lambda seg: seg.a)
    split = sum(seg.b <= 0.0 for seg in pieces)
    ordered = [*pieces[:split], None, *pieces[split:]]
    masses = np.array([post.atom if seg is None else seg.mass for seg in ordered])
    cum = np.cumsum(masses)
    u = (np.arange(points) + 0.5) / points * cum[-1]
    which = np.minimum(np.searchsorted(cum, u, side="right"), len(masses) - 1)
    out = np.zeros(points)
    m, s = post.estimate, post.se
    for index in np.unique(which).tolist():
        seg = ordered[index]
        if seg is None:
            continue  # the atom: the truth is exactly zero
        chosen = which == index
        share = np.clip((u[chosen] - (cum[index] - masses[index])) / masses[index], 0.0, 1.0)
        za, zb = (seg.a - m) / s, (seg.b - m) / s
        if za > 0:  # the piece lies right of the estimate: invert the survival function
            sa, sb = ndtr(-za), ndtr(-zb)
            z = -ndtri(sa - share * (sa - sb))
        else:
            fa, fb = ndtr(za), ndtr(zb)
            z = ndtri(fa + share * (fb - fa))
        out[chosen] = np.clip(m + s * z, seg.a, seg.b)
    return out


def expected_estimand_gain(
    prior: Prior, estimate: float, se: float, probe: Triple, reference: Triple, truth: Estimand
) -> float:
    """E_post[estimand reward of `probe` - of `reference`] under the posterior of
    prior x N(estimate, se^2), scored against the task's anchor, scale and level. An
    estimate with no posterior mass under the prior (the probe then answers the
    likelihood's interval) counts as no gain."""
    try:
        post = Posterior(prior, estimate, se)
    except ValueError:
        return 0.0
    points = posterior_points(post)
    return weighted_gain(points, np.ones_like(points), probe, reference, truth)


def weighted_gain(
    truths: np.ndarray, weights: np.ndarray, probe: Triple, reference: Triple, truth: Estimand
) -> float:
    """The weighted mean over candidate truths of the probe's estimand reward minus
    the reference's, each scored against the task's anchor, scale and level (a
    posterior given as points, or as a grid with its density)."""
    r, scale, alpha = truth.reference_width, truth.scale, truth.interval_alpha
    gains = [
        estimand_score(theta, *probe, r, scale, alpha).reward
        - estimand_score(theta, *reference, r, scale, alpha).reward
        for theta in truths.tolist()
    ]
    return float(np.average(gains, weights=weights))


def answer_intervals(task: Task, answer: Mapping[str, object]) -> dict[str, Triple]:
    """Each estimand's (estimate, lower, upper) in an audit answer, read through the
    family's own schema (the one place that knows where a family's intervals sit)."""
    family = task.public.family
    checked = validate_submission(
        family, dict(answer), task.public.columns, tuple(task.hidden.estimands)
    )
    if not isinstance(checked, Accepted):
        raise GenerationError(f"{task.public.task_id}: an audit answer did not validate")
    return hooks_of(family).contract.intervals(checked.submission)


def task_gain(task: Task, reference: ScoreRecord, estimand_gains: Mapping[str, float]) -> float:
    """The task-reward gain that per-estimand expected gains imply: the estimand
    reward is their mean, and the family's total takes it with the reference's own
    components (a posterior probe keeps the reference's other fields)."""
    hooks = hooks_of(task.public.family)
    shift = float(np.mean(list(estimand_gains.values())))
    return hooks.total_reward(reference.estimand_reward + shift, reference.components) - (
        reference.reward
    )
