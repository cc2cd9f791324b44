"""Every submission an agent can produce ends as schema errors or a finite score.

Submissions go through the path the runner uses: the raw `submit_answer` argument
text into `run_submit` (validation on the host), then `score_answer` on the task.
Inputs are honest answers mutated every way that broke validation before: huge and
non-finite numbers, thousands of digits, deep nesting, NUL bytes and lone
surrogates, huge lists, truncation, random bytes.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causal_gym.reference.probes import Staged, honest
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.validate import Accepted
from orchestrator.agents.tools import run_submit
from tests.conftest import FAMILIES, cached_task

TASKS = {family: cached_task(f"train:{family}:2") for family in FAMILIES}
HONEST = {
    family: honest(Staged.parse(t.public.files["data.csv"], t.public.files["README.md"].decode()))
    for family, t in TASKS.items()
}

weird_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.sampled_from([1e308, -1e308, 1e12, -1e12, 1e12 + 1, 5e-324, 0.0, -0.0]),
)
weird_strings = st.text(
    alphabet=st.characters(codec=None, exclude_categories=()), max_size=40
) | st.sampled_from(["\x00", "\ud800", "a\udfffb", "'", '"', "\\", "é" * 500])
json_values = st.recursive(
    st.none() | st.booleans() | weird_numbers | weird_strings,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(weird_strings, inner, max_size=4),
    max_leaves=20,
)


def mutate_object(answer: dict[str, Any], data: st.DataObject) -> Any:
    value: Any = dict(answer)
    for _ in range(data.draw(st.integers(0, 4))):
        action = data.draw(st.sampled_from(["set", "drop", "add", "names", "wrap"]))
        if action == "set" and isinstance(value, dict) and value:
            value[data.draw(st.sampled_from(sorted(value)))] = data.draw(json_values)
        elif action == "drop" and isinstance(value, dict) and value:
            value.pop(data.draw(st.sampled_from(sorted(value))))
        elif action == "add" and isinstance(value, dict):
            value[data.draw(weird_strings)] = data.draw(json_values)
        elif action == "names" and isinstance(value, dict):
            value["adjustment_set"] = data.draw(
                st.lists(weird_strings, max_size=30)
                | st.builds(
                    lambda n, k: [f"c{i % k}" for i in range(n)],
                    st.integers(0, 5000),
                    st.integers(1, 50),
                )
            )
        elif action == "wrap":
            value = [value] * data.draw(st.integers(1, 3))
    return value


def to_text(value: Any, data: st.DataObject) -> str:
    text = json.dumps(value, allow_nan=True)
    form = data.draw(st.sampled_from(["plain", "truncate", "splice", "nest", "digits"]))
    if form == "truncate" and text:
        return text[: data.draw(st.integers(0, len(text) - 1))]
    if form == "splice":
        at = data.draw(st.integers(0, len(text)))
        return text[:at] + data.draw(weird_strings) + text[at:]
    if form == "nest":
        depth = data.draw(st.integers(1, 40_000))
        return "[" * depth + text + "]" * data.draw(st.integers(0, depth))
    if form == "digits":
        return text.replace("0", "9" * data.draw(st.integers(1, 6000)), 1)
    return text


def check_one(family: str, raw: str) -> None:
    task = TASKS[family]
    outcome = run_submit(raw, task.public)
    assert outcome.validation is not None
    if isinstance(outcome.validation, Accepted):
        record = score_answer(task, outcome.validation.submission.model_dump(mode="json"))
        assert record is not None
        numbers = [v for v in record.as_dict().values() if isinstance(v, float)]
        assert all(math.isfinite(v) for v in numbers), record
        json.dumps(record.as_dict(), allow_nan=False)
        assert outcome.content.startswith("Submission accepted")
    else:
        errors = outcome.validation.errors
        assert errors and all(isinstance(e, str) and e for e in errors)
        assert "not scored" in outcome.content
        json.dumps(outcome.content)  # the reply to the agent is valid JSON text, whatever it holds


def fuzz(family: str, data: st.DataObject) -> None:
    answer = HONEST[family]
    check_one(family, to_text(mutate_object(answer, data), data))


FUZZ = {"deadline": None, "suppress_health_check": list(HealthCheck), "database": None}


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_mutated_submissions_end_as_errors_or_finite_scores(
    family: str, data: st.DataObject
) -> None:
    fuzz(family, data)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=10_000, **FUZZ)
@given(data=st.data())
def test_ten_thousand_mutated_submissions_per_family(family: str, data: st.DataObject) -> None:
    fuzz(family, data)


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ('{"estimate": %s, "ci_lower": 0, "ci_upper": 1}' % ("9" * 401), "estimate:"),
        ('{"estimate": 0, "ci_lower": %s, "ci_upper": 1}' % ("9" * 401), "ci_lower:"),
        ('{"estimate": %s, "ci_lower": 0, "ci_upper": 1}' % ("9" * 5000), "4300 digits"),
        ("[" * 60_000, "nested too deeply"),
        ("[" * 100_000, "at most 65536"),
        ('{"estimate": 0, "ci_lower": -1e308, "ci_upper": 1e308}', "within [-1e12, 1e12]"),
    ],
)
def test_the_attacks_that_used_to_crash_are_schema_errors(raw: str, fragment: str) -> None:
    outcome = run_submit(raw, TASKS["ate"].public)
    assert outcome.validation is not None and not outcome.validation.ok
    assert any(fragment in e for e in outcome.validation.errors), outcome.validation.errors


@pytest.mark.parametrize("count", [20_000, 6_000_000])
def test_huge_adjustment_sets_are_refused_at_once(count: int) -> None:
    import time

    answer = {**HONEST["adjustment"], "adjustment_set": ["a"] * count}
    started = time.monotonic()
    outcome = run_submit(json.dumps(answer), TASKS["adjustment"].public)
    # Linear work is well under a second here; a quadratic check of 6M names would take
    # hours. The bound is loose because the machines are noisy (CI runs builds beside).
    assert time.monotonic() - started < 10.0
    assert outcome.validation is not None and not outcome.validation.ok
