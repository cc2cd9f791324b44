"""Hand-worked reward examples: every constant the README states, pinned by arithmetic
done on paper, independently of causal_gym/scoring/reward.py.

README: W = w + (2/0.12)(max(0, l - theta) + max(0, theta - u));
L = W + |est - theta| + 2 max(0, r - w); R = 1 - L / s;
adjustment = 0.7 R + 0.3 validity; null_detect = 0.9 R + 0.1 (1 - (p - y)^2 / (pi (1 - pi)))
with pi = 13/20; clipped_reward = max(-1, total).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from causal_gym.contracts.submissions import AteSubmission
from causal_gym.estimand import Estimand
from causal_gym.families.adjustment.contract import AdjustmentSubmission
from causal_gym.families.null_detect.contract import NullDetectSubmission
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import Tier
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.reward import estimand_score, score_submission
from causal_gym.task import HiddenTruth, PublicTask, Task
from causal_gym.task_id import Family
from causal_gym.versions import REWARD_VERSION

EXACT = 1e-12


def truth(family: Family, ate: float, width: float, scale: float) -> HiddenTruth:
    """x confounds t -> y; the declared pre-treatment set is {x}."""
    return HiddenTruth(
        task_id=f"train:{family.value}:0",
        family=family,
        tier=Tier.EASY,
        effect_class=EffectClass.STANDARD,
        estimands={"ate": Estimand(ate, ate, width / 3.29, width, scale)},
        treatment="t",
        outcome="y",
        pre_treatment=("x",),
        post_treatment=(),
        latent=(),
        roles={"x": "confounder", "t": "treatment", "y": "outcome"},
        edges=(("x", "t"), ("x", "y"), ("t", "y")),
        generation_attempts=1,
    )


def test_covered_interval_wider_than_reference() -> None:
    # theta 1, est 1.2, [0.5, 1.9]: w 1.4, W 1.4, |err| 0.2, no narrow penalty, L 1.6;
    # s 4 -> R = 1 - 1.6/4 = 0.6; width ratio 1.4 / r (r = 1).
    score = estimand_score(1.0, 1.2, 0.5, 1.9, reference_width=1.0, scale=4.0)
    assert score.interval_loss == pytest.approx(1.4, abs=EXACT)
    assert score.abs_error == pytest.approx(0.2, abs=EXACT)
    assert score.narrow_penalty == 0.0
    assert score.reward == pytest.approx(0.6, abs=EXACT)
    assert score.width_ratio == pytest.approx(1.4, abs=EXACT) and score.covered
    assert score.width == pytest.approx(1.4, abs=EXACT)


@pytest.mark.parametrize(("lower", "upper"), [(1.0, 2.0), (0.0, 1.0), (1.0, 1.0)])
def test_a_truth_on_a_bound_is_covered(lower: float, upper: float) -> None:
    assert estimand_score(1.0, 1.0, lower, upper, reference_width=1.0, scale=1.0).covered


def test_the_score_record_carries_every_loss_component() -> None:
    record = score_submission(
        truth(Family("ate"), 0.0, 1.0, 2.0),
        AteSubmission(estimate=0.0, ci_lower=-0.25, ci_upper=0.25),
    )
    assert record.family == "ate"
    assert record.interval_loss == pytest.approx(0.5, abs=EXACT)
    assert record.abs_error == 0.0
    assert record.narrow_penalty == pytest.approx(1.0, abs=EXACT)
    assert record.loss == pytest.approx(1.5, abs=EXACT)
    assert record.as_dict() == {
        "family": "ate",
        "reward": pytest.approx(0.25, abs=EXACT),
        "clipped_reward": pytest.approx(0.25, abs=EXACT),
        "estimand_reward": pytest.approx(0.25, abs=EXACT),
        "covered": True,
        "width_ratio": pytest.approx(0.5, abs=EXACT),
        "interval_loss": pytest.approx(0.5, abs=EXACT),
        "abs_error": 0.0,
        "narrow_penalty": pytest.approx(1.0, abs=EXACT),
        "loss": pytest.approx(1.5, abs=EXACT),
        "coverage": 1.0,
        "reward_version": REWARD_VERSION,
    }


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (Family("adjustment"), "an adjustment task needs an AdjustmentSubmission"),
        (Family("null_detect"), "a null_detect task needs a NullDetectSubmission"),
    ],
)
def test_a_submission_of_the_wrong_family_is_a_programming_error(
    family: Family, message: str
) -> None:
    with pytest.raises(TypeError, match=f"^{message}$"):
        score_submission(
            truth(family, 1.0, 1.0, 1.0), AteSubmission(estimate=1.0, ci_lower=0.0, ci_upper=2.0)
        )


def test_narrow_penalty_is_two_per_unit_below_r() -> None:
    # theta 0, est 0, [-0.25, 0.25]: w 0.5, r 1 -> narrow 2 * 0.5 = 1; L 0.5 + 1 = 1.5;
    # s 2 -> R = 0.25.
    score = estimand_score(0.0, 0.0, -0.25, 0.25, reference_width=1.0, scale=2.0)
    assert score.narrow_penalty == pytest.approx(1.0, abs=EXACT)
    assert score.loss == pytest.approx(1.5, abs=EXACT)
    assert score.reward == pytest.approx(0.25, abs=EXACT)


def test_miss_above_costs_two_over_0_12_per_unit() -> None:
    # theta 1, est 0, [-0.5, 0.5]: W = 1 + (50/3)(0.5) = 28/3; |err| 1; L = 31/3;
    # s 20 -> R = 1 - 31/60 = 29/60.
    score = estimand_score(1.0, 0.0, -0.5, 0.5, reference_width=1.0, scale=20.0)
    assert score.interval_loss == pytest.approx(float(Fraction(28, 3)), abs=EXACT)
    assert score.reward == pytest.approx(float(Fraction(29, 60)), abs=EXACT)
    assert not score.covered


def test_miss_below_and_the_scale_divides_the_loss() -> None:
    # theta -1, est 0.5, [0, 1]: W = 1 + 50/3 = 53/3; |err| 3/2; L = 115/6;
    # s 10 -> R = 1 - 115/60 = -11/12; with s 5 the same loss gives 1 - 115/30 = -17/6.
    for scale, expected in ((10.0, Fraction(-11, 12)), (5.0, Fraction(-17, 6))):
        score = estimand_score(-1.0, 0.5, 0.0, 1.0, reference_width=1.0, scale=scale)
        assert score.loss == pytest.approx(float(Fraction(115, 6)), abs=EXACT)
        assert score.reward == pytest.approx(float(expected), abs=EXACT)


def test_ate_total_is_the_estimand_reward_and_clipping_is_display_only() -> None:
    record = score_submission(
        truth(Family("ate"), -1.0, 1.0, 5.0),
        AteSubmission(estimate=0.5, ci_lower=0.0, ci_upper=1.0),
    )
    assert record.reward == pytest.approx(float(Fraction(-17, 6)), abs=EXACT)
    assert record.clipped_reward == -1.0


@pytest.mark.parametrize(("names", "validity"), [(["x"], 1.0), ([], 0.0)])
def test_adjustment_total_is_seven_tenths_r_plus_three_tenths_validity(
    names: list[str], validity: float
) -> None:
    # R = 0.6 (first example); total = 0.7 * 0.6 + 0.3 * validity = 0.42 or 0.72.
    record = score_submission(
        truth(Family("adjustment"), 1.0, 1.0, 4.0),
        AdjustmentSubmission(estimate=1.2, ci_lower=0.5, ci_upper=1.9, adjustment_set=names),
    )
    assert record.validity == validity
    assert record.reward == pytest.approx(0.42 + 0.3 * validity, abs=EXACT)


@pytest.mark.parametrize(
    ("ate", "p", "skill"),
    [
        # effect (y = 1), p 0.9: 1 - 0.01 / 0.2275 = 0.2175 / 0.2275 = 87/91
        (1.0, 0.9, Fraction(87, 91)),
        # no effect (y = 0), p 0.25: 1 - 0.0625 / 0.2275 = 0.165 / 0.2275 = 66/91
        (0.0, 0.25, Fraction(66, 91)),
        # the prior itself on a null: 1 - 0.4225 / 0.2275 = 1 - 13/7 = -6/7
        (0.0, 0.65, Fraction(-6, 7)),
    ],
)
def test_null_detect_total_is_nine_tenths_r_plus_a_tenth_of_brier_skill(
    ate: float, p: float, skill: Fraction
) -> None:
    # est = theta, [theta - 0.5, theta + 0.5], r 1, s 4: L = 1 -> R = 0.75.
    record = score_submission(
        truth(Family("null_detect"), ate, 1.0, 4.0),
        NullDetectSubmission(
            estimate=ate, ci_lower=ate - 0.5, ci_upper=ate + 0.5, effect_probability=p
        ),
    )
    assert record.estimand_reward == pytest.approx(0.75, abs=EXACT)
    assert record.brier_skill == pytest.approx(float(skill), abs=EXACT)
    assert record.reward == pytest.approx(0.9 * 0.75 + 0.1 * float(skill), abs=EXACT)


def test_raw_json_through_the_one_scoring_path() -> None:
    hidden = truth(Family("ate"), 1.0, 1.0, 4.0)
    public = PublicTask(
        task_id=hidden.task_id,
        family=Family("ate"),
        tier=Tier.EASY,
        n_rows=3,
        files={"data.csv": b"x,t,y\n", "README.md": b"# t\n"},
        prompt="p",
        pre_treatment_columns=("x",),
        columns=("x", "t", "y"),
        generation_attempts=1,
    )
    record = score_answer(
        Task(public, hidden), '{"estimate": 1.2, "ci_lower": 0.5, "ci_upper": 1.9}'
    )
    assert record is not None and record.reward == pytest.approx(0.6, abs=EXACT)
    assert score_answer(Task(public, hidden), '{"estimate": 1.2}') is None
    adjustment = Task(
        PublicTask(**{**vars(public), "family": Family("adjustment")}),
        truth(Family("adjustment"), 1.0, 1.0, 4.0),
    )
    answer = {"estimate": 1.2, "ci_lower": 0.5, "ci_upper": 1.9}
    assert score_answer(adjustment, {**answer, "adjustment_set": ["x"]}) is not None
    # a name that is not a column of the task is a schema error, never a score
    assert score_answer(adjustment, {**answer, "adjustment_set": ["ghost"]}) is None
