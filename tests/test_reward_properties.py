"""Property tests for the reward: the invariants an RL trainer relies on."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from causal_gym.families.null_detect.contract import (
    EFFECT_PRIOR,
    NULL_BLOCK_COUNTS,
    NULL_BLOCK_SIZE,
    NullDetectSubmission,
)
from causal_gym.scoring.reward import (
    MISS_PENALTY,
    brier_skill,
    estimand_score,
    score_submission,
)
from tests.conftest import cached_task

finite = st.floats(-1e3, 1e3, allow_nan=False)
positive = st.floats(1e-3, 1e2, allow_nan=False)


@given(finite, positive, positive, st.floats(0.0, 10.0))
def test_centred_interval_loss_uniquely_minimized_at_reference_width(
    truth: float, r: float, scale: float, factor: float
) -> None:
    width = factor * r
    assume(abs(width - r) > 1e-6 * r)
    at_r = estimand_score(truth, truth, truth - r / 2, truth + r / 2, r, scale)
    other = estimand_score(truth, truth, truth - width / 2, truth + width / 2, r, scale)
    assert other.loss > at_r.loss
    assert other.reward < at_r.reward


def test_expected_loss_of_a_calibrated_estimator_is_minimized_at_90_percent() -> None:
    """E over est ~ N(truth, se) of the loss of est +- z se is smallest at z_0.95."""
    se, truth, scale = 1.0, 0.0, 10.0
    r = 2 * norm.ppf(0.95) * se
    grid = norm.ppf(np.linspace(0.0005, 0.9995, 4001)) * se  # quantiles of the error
    levels = np.round(np.arange(0.80, 0.995, 0.005), 3)
    expected = []
    for level in levels:
        half = norm.ppf(0.5 + level / 2) * se
        losses = [estimand_score(truth, e, e - half, e + half, r, scale).loss for e in grid]
        expected.append(np.mean(losses))
    assert levels[int(np.argmin(expected))] == 0.9


@given(finite, positive, positive, st.floats(0.0, 100.0), st.floats(0.001, 100.0), st.booleans())
def test_loss_grows_with_miss_distance(
    truth: float, width: float, scale: float, miss: float, more: float, above: bool
) -> None:
    sign = 1.0 if above else -1.0

    def loss_at(distance: float) -> float:
        centre = truth + sign * (width / 2 + distance)
        return estimand_score(
            truth, centre, centre - width / 2, centre + width / 2, width, scale
        ).loss

    near, far = loss_at(miss), loss_at(miss + more)
    assert far > near
    # beyond the interval each unit of miss costs the interval-score penalty plus |error|
    assert np.isclose(far - near, (MISS_PENALTY + 1.0) * more, rtol=1e-6, atol=1e-6)


def test_prior_forecast_has_zero_expected_skill() -> None:
    nonnull = NULL_BLOCK_SIZE - NULL_BLOCK_COUNTS["structural_null"]
    block = [True] * nonnull + [False] * NULL_BLOCK_COUNTS["structural_null"]
    skills = [brier_skill(EFFECT_PRIOR, has_effect, EFFECT_PRIOR) for has_effect in block]
    assert abs(np.mean(skills)) < 1e-12
    assert brier_skill(1.0, True, EFFECT_PRIOR) == 1.0 == brier_skill(0.0, False, EFFECT_PRIOR)
    high = EFFECT_PRIOR + 0.1
    assert brier_skill(high, True, EFFECT_PRIOR) > 0 > brier_skill(high, False, EFFECT_PRIOR)


@settings(max_examples=200, deadline=None)
@given(finite, st.floats(0.0, 1e4), st.floats(0.0, 1.0))
def test_clipped_reward_never_changes_the_scored_total(
    shift: float, width: float, p: float
) -> None:
    truth = cached_task("train:null_detect:1").hidden
    estimate = truth.ate + shift
    sub = NullDetectSubmission(
        estimate=estimate,
        ci_lower=estimate - width / 2,
        ci_upper=estimate + width / 2,
        effect_probability=p,
    )
    record = score_submission(truth, sub)
    expected = 0.9 * record.estimand_reward + 0.1 * record.brier_skill
    assert record.reward == expected
    assert record.clipped_reward == max(-1.0, record.reward)
    assert record.clipped_reward >= record.reward
