"""Submission validation: every kind of bad input lists every problem and is never scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causal_gym.scoring.validate import validate_submission
from causal_gym.task_id import FAMILIES, Family

COLUMNS = ("age", "income", "region", "treated_flag", "score", "visits_fu")
GOOD = {"estimate": 0.5, "ci_lower": 0.2, "ci_upper": 0.8}


def errors(family: Family, raw: object) -> tuple[str, ...]:
    result = validate_submission(family, raw, COLUMNS)  # type: ignore[arg-type]
    assert result.ok == (not result.errors)
    return result.errors


def test_valid_submissions_per_family() -> None:
    assert not errors(Family("ate"), GOOD)
    assert not errors(Family("adjustment"), {**GOOD, "adjustment_set": ["age", "region"]})
    assert not errors(Family("null_detect"), {**GOOD, "effect_probability": 0.65})
    assert not errors(Family("ate"), json.dumps({"estimate": 1, "ci_lower": 0, "ci_upper": 2}))


@pytest.mark.parametrize(
    ("family", "raw", "expected"),
    [
        (Family("ate"), "{not json", ["submission is not valid JSON"]),
        (
            Family("ate"),
            "[1, 2]",
            ["must be a JSON object with fields estimate, ci_lower, ci_upper"],
        ),
        (Family("ate"), {**GOOD, "notes": "hi"}, ["notes: Extra inputs are not permitted"]),
        (
            Family("ate"),
            {"estimate": 1.0},
            ["ci_lower: Field required", "ci_upper: Field required"],
        ),
        (
            Family("ate"),
            '{"estimate": NaN, "ci_lower": -Infinity, "ci_upper": 1}',
            [
                "estimate: Input should be a finite number",
                "ci_lower: Input should be a finite number",
            ],
        ),
        (
            Family("ate"),
            {"estimate": 1.0, "ci_lower": 2.0, "ci_upper": 1.0},
            ["ci_lower (2.0) must be <= ci_upper (1.0)"],
        ),
        (
            Family("ate"),
            {"estimate": "1.0", "ci_lower": 0.0, "ci_upper": 1.0},
            ["estimate: Input should be a valid number"],
        ),
        (Family("ate"), {**GOOD, "estimate": True}, ["estimate: Input should be a valid number"]),
        (
            Family("adjustment"),
            {**GOOD, "adjustment_set": ["age", "height", "weight"]},
            ["unknown columns 'height', 'weight'"],
        ),
        (Family("adjustment"), {**GOOD, "adjustment_set": ["age", "age"]}, ["more than once: age"]),
        (Family("adjustment"), GOOD, ["adjustment_set: Field required"]),
        (
            Family("null_detect"),
            {**GOOD, "effect_probability": 1.5},
            ["effect_probability: Input should be less than or equal to 1"],
        ),
        (
            Family("ate"),
            {**GOOD, "effect_probability": 0.5},
            ["effect_probability: Extra inputs are not permitted"],
        ),
        (
            Family("null_detect"),
            {**GOOD, "adjustment_set": ["age"]},
            [
                "effect_probability: Field required",
                "adjustment_set: Extra inputs are not permitted",
            ],
        ),
    ],
)
def test_each_bad_input_names_its_problem(family: Family, raw: object, expected: list[str]) -> None:
    found = errors(family, raw)
    for fragment in expected:
        assert any(fragment in e for e in found), (fragment, found)


def test_error_texts_exactly() -> None:
    """Where an error points and what it says, to the character: an agent reads these."""
    nested = validate_submission(Family("adjustment"), {**GOOD, "adjustment_set": ["age", 7]})
    assert nested.errors == ("adjustment_set.1: Input should be a valid string",)
    swapped = validate_submission(
        Family("ate"), {"estimate": 1.0, "ci_lower": 2.0, "ci_upper": 1.0}
    )
    assert swapped.errors == ("submission: ci_lower (2.0) must be <= ci_upper (1.0)",)
    repeated = validate_submission(Family("adjustment"), {**GOOD, "adjustment_set": ["age", "age"]})
    assert repeated.errors == ("submission: adjustment_set lists columns more than once: age",)


def test_a_zero_width_interval_is_valid() -> None:
    """ci_lower <= ci_upper: equal bounds are allowed (and pay the narrow penalty)."""
    assert validate_submission(
        Family("ate"), {"estimate": 1.0, "ci_lower": 1.0, "ci_upper": 1.0}
    ).ok


def test_every_problem_is_listed_at_once() -> None:
    raw = {
        "estimate": float("nan"),
        "ci_lower": 3.0,
        "ci_upper": 1.0,
        "extra": 1,
        "adjustment_set": ["ghost"],
    }
    found = errors(Family("adjustment"), raw)
    assert len(found) == 4, found
    joined = "\n".join(found)
    for fragment in ("estimate:", "extra:", "ci_lower (3.0) must be <= ci_upper (1.0)", "'ghost'"):
        assert fragment in joined


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["estimate", "ci_lower", "ci_upper", "adjustment_set", "effect_probability", "x"]
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FAMILIES), st.dictionaries(field_names, json_values, max_size=6))
def test_fuzzed_objects_never_raise(family: Family, raw: dict) -> None:
    result = validate_submission(family, raw, COLUMNS)
    assert result.ok or result.errors


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FAMILIES), st.binary(max_size=64) | st.text(max_size=64))
def test_fuzzed_text_never_raises(family: Family, raw: bytes | str) -> None:
    result = validate_submission(family, raw, COLUMNS)
    assert result.ok or result.errors


def test_score_cli_refuses_invalid_submissions(tmp_path: Path) -> None:
    from tests.support.cli import causal_gym_cli

    bad = tmp_path / "bad.json"
    bad.write_text('{"estimate": 1, "ci_lower": 2, "ci_upper": 1, "surprise": true}')
    proc = causal_gym_cli("score", "train:ate:3", str(bad))
    assert proc.returncode == 1
    payload = json.loads(proc.stdout)
    assert payload["valid"] is False and "reward" not in payload
    assert len(payload["errors"]) == 2
