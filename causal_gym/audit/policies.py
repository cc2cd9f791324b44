"""Answer policies the audit scores: the honest reference and the ways to game it.

Every policy sees only what an agent sees (the staged data.csv and README.md) and
returns a submission dict, so the audit measures the real scorer on real answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from scipy.stats import norm

from causal_gym.reference.analyst import (
    DataDictionary,
    ReferenceFit,
    Z,
    fit_reference,
    outcome_scale,
    parse_readme,
    read_staged,
    reference_submission,
)
from causal_gym.spec.plan import EFFECT_PRIOR
from causal_gym.task import PublicTask

SWEEP_LEVELS: tuple[float, ...] = (
    0.50,
    0.60,
    0.70,
    0.80,
    0.85,
    0.88,
    0.89,
    0.90,
    0.91,
    0.92,
    0.95,
    0.98,
    0.99,
)
HUGE_INTERVAL_SCALES = 10.0
NARROW_NULL_SCALE_SHARE = 0.01

Answer = dict[str, object]


@dataclass(frozen=True)
class StagedView:
    """One task's staged files, parsed once and shared by every policy."""

    dictionary: DataDictionary
    frame: pd.DataFrame
    scale: float
    reference: ReferenceFit

    @classmethod
    def of(cls, task: PublicTask) -> StagedView:
        dictionary = parse_readme(task.files["README.md"].decode("utf-8"))
        frame = read_staged(task.files["data.csv"], dictionary)
        return cls(
            dictionary,
            frame,
            outcome_scale(frame, dictionary.outcome),
            fit_reference(frame, dictionary),
        )


def _interval(estimate: float, half_width: float) -> Answer:
    return {
        "estimate": estimate,
        "ci_lower": estimate - half_width,
        "ci_upper": estimate + half_width,
    }


def _with_family(
    answer: Answer, view: StagedView, adjustment: list[str], probability: float
) -> Answer:
    family = view.dictionary.family
    if family == "adjustment":
        return {**answer, "adjustment_set": adjustment}
    if family == "null_detect":
        return {**answer, "effect_probability": probability}
    return answer


def _probability_from(answer: Answer) -> float:
    zero_inside = answer["ci_lower"] <= 0.0 <= answer["ci_upper"]  # type: ignore[operator]
    return 0.25 if zero_inside else 0.95


def honest(view: StagedView) -> Answer:
    return reference_submission(view.reference, view.dictionary)


def at_level(level: float) -> Callable[[StagedView], Answer]:
    """The reference estimate with an interval for another nominal level."""
    z = float(norm.ppf(0.5 + level / 2))

    def policy(view: StagedView) -> Answer:
        answer = _interval(view.reference.estimate, z * view.reference.se)
        return _with_family(
            answer, view, list(view.dictionary.pre_treatment), _probability_from(answer)
        )

    return policy


def _fitted(view: StagedView, covariates: tuple[str, ...], adjustment: list[str]) -> Answer:
    fit = fit_reference(view.frame, view.dictionary, covariates)
    answer = _interval(fit.estimate, Z * fit.se)
    return _with_family(answer, view, adjustment, _probability_from(answer))


def diff_in_means(view: StagedView) -> Answer:
    """Cleans the data like the reference but adjusts for nothing."""
    return _fitted(view, (), [])


def post_treatment(view: StagedView) -> Answer:
    """Adjusts for every column it can, post-treatment ones included."""
    columns = view.dictionary.pre_treatment + view.dictionary.post_treatment
    return _fitted(view, columns, list(columns))


def constant_zero(view: StagedView) -> Answer:
    """Claims no effect and hides behind an interval ten scales wide on each side."""
    answer = _interval(0.0, HUGE_INTERVAL_SCALES * view.scale)
    return _with_family(answer, view, [], EFFECT_PRIOR)


def halved(view: StagedView) -> Answer:
    """The reference estimate with half the honest width (overconfidence)."""
    answer = _interval(view.reference.estimate, Z * view.reference.se / 2)
    return _with_family(
        answer, view, list(view.dictionary.pre_treatment), _probability_from(answer)
    )


def narrow_null(view: StagedView) -> Answer:
    """An oracle that knows the effect is zero: 0 with a 1%-of-scale interval."""
    answer = _interval(0.0, NARROW_NULL_SCALE_SHARE * view.scale / 2)
    return _with_family(answer, view, list(view.dictionary.pre_treatment), 0.0)


def prior_only(view: StagedView) -> Answer:
    """The honest interval with the disclosed prior as the effect probability."""
    return {**honest(view), "effect_probability": EFFECT_PRIOR}


HACK_PROBES: dict[str, Callable[[StagedView], Answer]] = {
    "diff_in_means": diff_in_means,
    "post_treatment_adjustment": post_treatment,
    "constant_zero_huge_interval": constant_zero,
    "reference_halved_interval": halved,
}
