"""The calibrated reward: a pure function of (hidden truth, validated submission).

The loss of an interval [l, u] with estimate m is the interval score W at level
alpha (width plus 2/alpha times any miss), plus |m - truth|, plus a penalty of 2 per
unit of width below an anchor r; dividing by the observable scale s makes rewards
comparable across tasks.

r is a property of the task wherever the task allows it (reward version 2,
causal_gym/versions.py): the efficiency bound on the expert tier, the width of OLS on the
optimal valid adjustment set on the seed families' linear tiers, neither of which any
honest interval's 90% width falls below. Those estimands carry alpha 0.10, the proper
interval score of a 90% interval, whose expected value is smallest at an analyst's
own calibrated 90% interval, so a more efficient analyst earns its narrower interval;
the kink only punishes claiming more precision than the task allows.

The multi-estimand families (cate, mediation, obs_vs_rct) anchor on the task too
from reward version 3 (each family's anchor.py: the efficient linear estimator's
width from the SCM, at the 5% quantile of its own estimate) and score at 0.10. The
frozen eval-v2 keeps version 2, where they had version 1's design: r the reference's
own 90% width and W at the 88% level, which with the kink puts the expected loss of
a centred interval at its minimum at exactly width r. The audits check that no other
level pays, on every family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from pydantic import BaseModel

from causal_gym.hooks import hooks_of
from causal_gym.sealed import Sealed
from causal_gym.task import HiddenTruth
from causal_gym.versions import REWARD_VERSION, task_reward_version

#: The level of W where r is the reference's own width (the multi-estimand families).
INTERVAL_SCORE_ALPHA = 0.12
#: The proper level of a 90% interval, where r is a property of the task.
PROPER_INTERVAL_ALPHA = 0.10
MISS_PENALTY = 2.0 / INTERVAL_SCORE_ALPHA
NARROW_PENALTY = 2.0
SCALE_FLOOR = 1e-6


@dataclass(frozen=True)
class EstimandScore:
    """One estimand's loss, term by term, and the reward it gives; `width_ratio` is the
    interval's width over the anchor r."""

    interval_loss: float
    abs_error: float
    narrow_penalty: float
    loss: float
    reward: float
    covered: bool
    width: float
    width_ratio: float


@dataclass(frozen=True, repr=False)
class ScoreRecord(Sealed):
    """What a scored episode reports; `reward` is the total that training optimizes.
    Sealed: with the submission, its error and coverage give the truth away."""

    family: str
    reward: float
    clipped_reward: float
    estimand_reward: float
    covered: bool
    width_ratio: float
    interval_loss: float
    abs_error: float
    narrow_penalty: float
    loss: float
    #: The share of the task's intervals that cover their truth (`covered` is all of
    #: them): what coverage tables average, so a cate task's levels count one by one.
    coverage: float
    #: The family's named components (validity, Brier skill), in its declared order.
    components: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Each estimand's own score (one entry, "ate", for the seed's families).
    estimands: Mapping[str, EstimandScore] = field(default_factory=lambda: MappingProxyType({}))
    #: The reward version that scored it (causal_gym/versions.py).
    reward_version: int = REWARD_VERSION

    @property
    def validity(self) -> float | None:
        """The adjustment set's validity, where the family scores one (adjustment); else None."""
        return self.components.get("validity")

    @property
    def brier_skill(self) -> float | None:
        """The effect probability's Brier skill, where the family scores one
        (null_detect, obs_vs_rct); else None."""
        return self.components.get("brier_skill")

    def as_dict(self) -> dict[str, object]:
        """Flat: the fields, then each component under its own name."""
        nested = ("components", "estimands")
        record = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in nested}
        return {**record, **self.components}


def estimand_score(
    truth: float,
    estimate: float,
    lower: float,
    upper: float,
    reference_width: float,
    scale: float,
    alpha: float = INTERVAL_SCORE_ALPHA,
) -> EstimandScore:
    """One interval scored against its truth: the interval score at level `alpha`, the
    absolute error and the penalty for width below `reference_width`, over `scale` (the
    module's docstring says why)."""
    width = upper - lower
    miss = 2.0 / alpha  # MISS_PENALTY at the default level
    interval_loss = width + miss * max(0.0, lower - truth) + miss * max(0.0, truth - upper)
    abs_error = abs(estimate - truth)
    narrow = NARROW_PENALTY * max(0.0, reference_width - width)
    loss = interval_loss + abs_error + narrow
    return EstimandScore(
        interval_loss=interval_loss,
        abs_error=abs_error,
        narrow_penalty=narrow,
        loss=loss,
        reward=1.0 - loss / max(scale, SCALE_FLOOR),
        covered=lower <= truth <= upper,
        width=width,
        width_ratio=width / reference_width,
    )


def brier_skill(probability: float, happened: bool, prior: float) -> float:
    """1 - Brier / Brier-of-the-prior: a constant forecast at the family's disclosed
    prior (its hooks pass it) scores 0 on average."""
    outcome = 1.0 if happened else 0.0
    return 1.0 - (probability - outcome) ** 2 / (prior * (1.0 - prior))


def score_submission(truth: HiddenTruth, submission: BaseModel) -> ScoreRecord:
    """Each estimand scored against its own truth, reference width and scale; the
    estimand reward is their mean (one estimand: that one), then the family's total.
    The loss fields and the width ratio are means over the estimands; `covered`
    holds when every interval covers."""
    hooks = hooks_of(truth.family)
    spec = hooks.contract
    answered = spec.intervals(submission)
    parts = {
        name: estimand_score(e.value, *answered[name], e.reference_width, e.scale, e.interval_alpha)
        for name, e in truth.estimands.items()
    }
    components = hooks.score_components(truth, submission)

    def mean(field: str) -> float:
        return sum(getattr(p, field) for p in parts.values()) / len(parts)

    estimand_reward = mean("reward")
    total = hooks.total_reward(estimand_reward, components)
    return ScoreRecord(
        family=truth.family.value,
        reward=total,
        clipped_reward=max(-1.0, total),
        estimand_reward=estimand_reward,
        covered=all(p.covered for p in parts.values()),
        coverage=sum(p.covered for p in parts.values()) / len(parts),
        width_ratio=mean("width_ratio"),
        interval_loss=mean("interval_loss"),
        abs_error=mean("abs_error"),
        narrow_penalty=mean("narrow_penalty"),
        loss=mean("loss"),
        components=MappingProxyType({name: components[name] for name in spec.components}),
        estimands=MappingProxyType(parts),
        reward_version=task_reward_version(truth.task_id),
    )
