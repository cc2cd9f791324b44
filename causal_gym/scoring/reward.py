"""The calibrated reward: a pure function of (hidden truth, validated submission).

Interval loss W is the interval score at the 88% level; adding |estimate - truth| and
a penalty of 2 per unit of width below the reference width r makes the expected loss
of a centred interval smallest at exactly width r, which is the honest 90% width on
the staged data. So no level other than 90% pays, and the audit checks that it
does not. Dividing by the observable scale s makes rewards comparable across tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import networkx as nx

from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.scoring.schemas import AdjustmentSubmission, AteSubmission, NullDetectSubmission
from causal_gym.sealed import Sealed
from causal_gym.spec.plan import EFFECT_PRIOR
from causal_gym.task import HiddenTruth
from causal_gym.task_id import Family

INTERVAL_SCORE_ALPHA = 0.12
MISS_PENALTY = 2.0 / INTERVAL_SCORE_ALPHA
NARROW_PENALTY = 2.0
SCALE_FLOOR = 1e-6
ADJUSTMENT_WEIGHTS = (0.7, 0.3)
NULL_DETECT_WEIGHTS = (0.9, 0.1)


@dataclass(frozen=True)
class EstimandScore:
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
    validity: float | None = None
    brier_skill: float | None = None

    def as_dict(self) -> dict[str, object]:
        record = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: v for k, v in record.items() if v is not None}


def estimand_score(
    truth: float, estimate: float, lower: float, upper: float, reference_width: float, scale: float
) -> EstimandScore:
    width = upper - lower
    interval_loss = (
        width + MISS_PENALTY * max(0.0, lower - truth) + MISS_PENALTY * max(0.0, truth - upper)
    )
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


def brier_skill(probability: float, has_effect: bool, prior: float = EFFECT_PRIOR) -> float:
    """1 - Brier / Brier-of-the-prior: a constant forecast at the prior scores 0 on average."""
    outcome = 1.0 if has_effect else 0.0
    return 1.0 - (probability - outcome) ** 2 / (prior * (1.0 - prior))


def adjustment_validity(truth: HiddenTruth, names: list[str]) -> float:
    """1 iff every name is a declared pre-treatment column and the set satisfies the
    backdoor criterion on the hidden graph (latents included)."""
    if not set(names) <= set(truth.pre_treatment):
        return 0.0
    graph = nx.DiGraph()
    graph.add_nodes_from(truth.roles)
    graph.add_edges_from(truth.edges)
    return 1.0 if satisfies_backdoor(graph, truth.treatment, truth.outcome, names) else 0.0


def score_submission(truth: HiddenTruth, submission: AteSubmission) -> ScoreRecord:
    part = estimand_score(
        truth.ate,
        submission.estimate,
        submission.ci_lower,
        submission.ci_upper,
        truth.reference_width,
        truth.scale,
    )
    validity = skill = None
    total = part.reward
    if truth.family is Family.ADJUSTMENT:
        if not isinstance(submission, AdjustmentSubmission):
            raise TypeError("an adjustment task needs an AdjustmentSubmission")
        validity = adjustment_validity(truth, submission.adjustment_set)
        total = ADJUSTMENT_WEIGHTS[0] * part.reward + ADJUSTMENT_WEIGHTS[1] * validity
    elif truth.family is Family.NULL_DETECT:
        if not isinstance(submission, NullDetectSubmission):
            raise TypeError("a null_detect task needs a NullDetectSubmission")
        skill = brier_skill(submission.effect_probability, truth.ate != 0.0)
        total = NULL_DETECT_WEIGHTS[0] * part.reward + NULL_DETECT_WEIGHTS[1] * skill
    return ScoreRecord(
        family=truth.family.value,
        reward=total,
        clipped_reward=max(-1.0, total),
        estimand_reward=part.reward,
        covered=part.covered,
        width_ratio=part.width_ratio,
        interval_loss=part.interval_loss,
        abs_error=part.abs_error,
        narrow_penalty=part.narrow_penalty,
        loss=part.loss,
        validity=validity,
        brier_skill=skill,
    )
