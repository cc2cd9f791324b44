"""The brief rendering (orchestrator/integrations/brief.py) and the TRL adapter's brief
environment: the brief is a function of the staged files alone, its fits are the
reference kit's, and the brief environment offers submit_answer and nothing else,
scored by the source like every other submission."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator

import pytest

from causal_gym.reference.analyst import parse_readme
from causal_gym.reference.answer import files_answer
from orchestrator.errors import IntegrationError
from orchestrator.integrations.brief import BRIEF_FAMILIES, task_brief
from orchestrator.integrations.session import SessionSettings, TaskSession
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.trl import CausalGymBriefEnvironment, CausalGymTRL

INTERVAL = re.compile(r"^(.+): (\S+), 90% interval \[(\S+), (\S+)\], p = \S+$", re.MULTILINE)


@pytest.fixture(scope="module")
def source() -> Iterator[LocalSource]:
    local = LocalSource(BRIEF_FAMILIES)
    yield local
    local.close()


def test_the_brief_reads_the_staged_files_and_prints_the_kits_fit(source: LocalSource) -> None:
    seen = set()
    for _ in range(9):
        task = source.next_task()
        brief = task_brief(task)
        seen.add(task.family.value)
        # the same files under another handle: the same brief (nothing else goes in)
        other = task.model_copy(update={"handle": "another-handle-0001"})
        assert task_brief(other) == brief
        fits = {label: tuple(map(float, rest)) for label, *rest in INTERVAL.findall(brief)}
        adjusted = fits["Adjusted for every pre-treatment column"]
        assert adjusted[1] < adjusted[0] < adjusted[2]
        if task.family.value != "null_detect" and not parse_readme(task.readme).nonlinear:
            reference = files_answer(dict(task.files))
            assert adjusted[0] == pytest.approx(reference["estimate"], rel=1e-3, abs=1e-6)
            assert adjusted[1] == pytest.approx(reference["ci_lower"], rel=1e-3, abs=1e-6)
        assert ("adjustment set" in brief) == (task.family.value == "adjustment")
        assert ("effect_probability" in brief) == (task.family.value == "null_detect")
        assert len(brief) < len(task.readme) / 3
    assert seen == set(BRIEF_FAMILIES)


def test_the_brief_refuses_a_family_it_cannot_read() -> None:
    design = LocalSource(("iv",))
    try:
        with pytest.raises(IntegrationError, match="covers ate, adjustment, null_detect; iv"):
            task_brief(design.next_task())
    finally:
        design.close()


def test_the_brief_environment_has_one_tool_and_the_sources_reward(source: LocalSource) -> None:
    tools = [
        name
        for name, _ in inspect.getmembers(CausalGymBriefEnvironment, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]  # TRL's rule for what an environment's tools are
    assert tools == ["submit_answer"]
    spec = CausalGymTRL(source, num_generations=2, settings=SessionSettings(rendering="brief"))
    assert spec.train_dataset[0]["prompt"][0]["content"] == spec.system_prompt
    first, second = spec.environment_factory(), spec.environment_factory()
    assert isinstance(first, CausalGymBriefEnvironment)
    shown = first.reset(task_slot=0)
    assert second.reset(task_slot=0) == shown  # one group, one task
    task = first._session.task
    assert task is not None and shown == task_brief(task)
    answer = files_answer(dict(task.files))
    reply = first.submit_answer(**answer)  # type: ignore[arg-type]
    assert "accepted" in reply.lower()
    assert first.get_reward() > 0.0 and second.get_reward() == -1.0  # no answer: -1
    assert spec.log[0]["task_digest"] == spec.log[1]["task_digest"]
    assert spec.log[0]["valid"] and not spec.log[1]["valid"]


def test_a_brief_session_starts_from_the_brief(source: LocalSource) -> None:
    with TaskSession(source, SessionSettings(rendering="brief")) as session:
        task = session.start()
        system, user = session.messages
        assert user["content"] == task_brief(task)
        assert "README" not in system["content"]
