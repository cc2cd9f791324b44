"""Every submission an agent can produce ends as schema errors or a finite score.

Submissions go through the path the runner uses: the raw `submit_answer` argument
text into `run_submit` (validation on the host), then `score_answer` on the task.
Inputs are honest answers mutated every way that broke validation before: huge and
non-finite numbers, thousands of digits, deep nesting, NUL bytes and lone
surrogates, huge lists, truncation, random bytes.

Each drawn mutation is applied to every family's honest answer, so each family meets
as many mutated submissions as the test names, drawn from the same distribution as if
it drew its own, while Hypothesis' drawing (most of the time: 6-7 ms an example against
under 1 ms to validate and score one submission) is paid once for all six.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
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


#: "set" and "drop" act on the key at `pick % len(keys)` of the sorted keys: one draw
#: serves every family (whose answers have 3 to 5 keys) and is uniform over them
#: (2520 is a multiple of every key count up to 10).
PICKS = 2520


@dataclass(frozen=True)
class Step:
    """One mutation of an answer, drawn once and applied to every family's answer."""

    action: str
    pick: int = 0
    value: Any = None
    name: str = ""
    copies: int = 1


@dataclass(frozen=True)
class Form:
    """How the mutated object becomes text. The cut or splice point depends on the text's
    length, so it is drawn per family (`at`); the rest is drawn once."""

    form: str
    insert: str = ""
    depth: int = 0
    closing: int = 0
    digits: int = 0


def draw_steps(data: st.DataObject) -> list[Step]:
    steps = []
    for _ in range(data.draw(st.integers(0, 4))):
        action = data.draw(st.sampled_from(["set", "drop", "add", "names", "wrap"]))
        if action == "set":
            steps.append(
                Step(
                    action, pick=data.draw(st.integers(0, PICKS - 1)), value=data.draw(json_values)
                )
            )
        elif action == "drop":
            steps.append(Step(action, pick=data.draw(st.integers(0, PICKS - 1))))
        elif action == "add":
            steps.append(Step(action, name=data.draw(weird_strings), value=data.draw(json_values)))
        elif action == "names":
            names = data.draw(
                st.lists(weird_strings, max_size=30)
                | st.builds(
                    lambda n, k: [f"c{i % k}" for i in range(n)],
                    st.integers(0, 5000),
                    st.integers(1, 50),
                )
            )
            steps.append(Step(action, value=names))
        else:
            steps.append(Step(action, copies=data.draw(st.integers(1, 3))))
    return steps


def mutate_object(answer: dict[str, Any], steps: list[Step]) -> Any:
    value: Any = dict(answer)
    for step in steps:
        if step.action == "set" and isinstance(value, dict) and value:
            keys = sorted(value)
            value[keys[step.pick % len(keys)]] = step.value
        elif step.action == "drop" and isinstance(value, dict) and value:
            keys = sorted(value)
            value.pop(keys[step.pick % len(keys)])
        elif step.action == "add" and isinstance(value, dict):
            value[step.name] = step.value
        elif step.action == "names" and isinstance(value, dict):
            value["adjustment_set"] = step.value
        elif step.action == "wrap":
            value = [value] * step.copies
    return value


def draw_form(data: st.DataObject) -> Form:
    form = data.draw(st.sampled_from(["plain", "truncate", "splice", "nest", "digits"]))
    if form == "splice":
        return Form(form, insert=data.draw(weird_strings))
    if form == "nest":
        depth = data.draw(st.integers(1, 40_000))
        return Form(form, depth=depth, closing=data.draw(st.integers(0, depth)))
    if form == "digits":
        return Form(form, digits=data.draw(st.integers(1, 6000)))
    return Form(form)


def to_text(value: Any, form: Form, data: st.DataObject) -> str:
    text = json.dumps(value, allow_nan=True)
    if form.form == "truncate" and text:
        return text[: data.draw(st.integers(0, len(text) - 1))]
    if form.form == "splice":
        at = data.draw(st.integers(0, len(text)))
        return text[:at] + form.insert + text[at:]
    if form.form == "nest":
        return "[" * form.depth + text + "]" * form.closing
    if form.form == "digits":
        return text.replace("0", "9" * form.digits, 1)
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


def fuzz_every_family(data: st.DataObject) -> None:
    """One drawn mutation, applied to each family's honest answer: every family meets a
    submission from the same distribution as when each drew its own, and the drawing
    (most of the cost: Hypothesis' own bookkeeping, not validation) is paid once."""
    steps, form = draw_steps(data), draw_form(data)
    for family in FAMILIES:
        raw = to_text(mutate_object(HONEST[family], steps), form, data)
        try:
            check_one(family, raw)
        except Exception as exc:
            raise AssertionError(f"{family}: {raw[:2000]!r}") from exc


FUZZ = {"deadline": None, "suppress_health_check": list(HealthCheck), "database": None}


@settings(max_examples=300, **FUZZ)
@given(data=st.data())
def test_mutated_submissions_end_as_errors_or_finite_scores(data: st.DataObject) -> None:
    """300 mutated submissions for each family."""
    fuzz_every_family(data)


@pytest.mark.slow
@settings(max_examples=10_000, **FUZZ)
@given(data=st.data())
def test_ten_thousand_mutated_submissions_per_family(data: st.DataObject) -> None:
    fuzz_every_family(data)


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
