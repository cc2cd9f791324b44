"""The analyst toolset (orchestrator/integrations/analyst_tools.py): its fit is the kit's
fit on the staged files, run in the task's sandbox; a choice the task cannot take is a
tool error the model reads and the episode goes on; its report is scored by the source
like any submission; and nothing it shows carries the key, a truth or an anchor."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.reference import analyst
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scoring.answer import episode_score
from orchestrator.errors import IntegrationError
from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES, analyst_readme
from orchestrator.integrations.session import SessionSettings, TaskSession
from orchestrator.integrations.settings import adapter_settings
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.trl import (
    CausalGymAnalystEnvironment,
    CausalGymTRL,
    analyst_reward,
)

pytestmark = pytest.mark.sandbox

ANALYST = SessionSettings(rendering="analyst")


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[LocalSource, Any]]:
    """A fresh local source (its tasks: train:ate:0, train:adjustment:0,
    train:null_detect:0, train:ate:1, ...) and its key, exported to regenerate the
    hidden truths."""
    source = LocalSource(ANALYST_FAMILIES)
    source.export_key(str(tmp_path / "local.key"))
    yield source, parse_key_hex((tmp_path / "local.key").read_text(), "export")
    source.close()


def test_a_choice_the_task_cannot_take_is_a_tool_error_and_the_episode_goes_on(
    keyed: tuple[LocalSource, Any],
) -> None:
    source, _ = keyed
    with TaskSession(source, ANALYST) as session:
        task = session.start()
        d = analyst.parse_readme(task.readme)
        refused = {
            "report before fit": session.call("report", {"width": "standard"}),
            "unknown column": session.call("fit", {"adjust_for": ["no_such_column"]}),
            "a path": session.call("fit", {"adjust_for": ["../../etc/passwd"]}),
            "the outcome": session.call("fit", {"adjust_for": [d.outcome]}),
            "unknown estimator": session.call(
                "fit", {"adjust_for": ["pre_treatment"], "estimator": "lasso"}
            ),
            "not a list": session.call("fit", {"adjust_for": {"a": 1}}),
            "extra argument": session.call("fit", {"adjust_for": [], "seed": 3}),
            "a flood": session.call("fit", {"adjust_for": ["pre_treatment"] * 100}),
            "not JSON": session.call("fit", "{adjust_for: pre}"),
            "unknown tool": session.call("bash", {"command": "cat README.md"}),
        }
        assert "unknown column 'no_such_column'" in refused["unknown column"]
        assert "pre_treatment, post_treatment" in refused["unknown column"]
        assert "unknown column '../../etc/passwd'" in refused["a path"]
        assert "not a covariate" in refused["the outcome"]
        assert "estimator is one of ols, aipw" in refused["unknown estimator"]
        assert "the tools are fit and report" in refused["unknown tool"]
        assert all(reply.startswith("error:") for reply in refused.values()), refused
        assert not session.done and session.invalid_attempts == 1  # the early report
        shown = session.call("fit", {"adjust_for": ["pre_treatment"], "estimator": "ols"})
        assert shown.startswith("estimate ") and "90% interval" in shown
        if task.family.value == "null_detect":
            missing = session.call("report", {"width": "standard"})
            assert "needs effect_probability" in missing and not session.done
            assert "[0, 1]" in session.call("report", {"effect_probability": 1.5})
            args: dict[str, Any] = {"width": "standard", "effect_probability": 0.8}
        else:
            assert "is for null_detect" in session.call("report", {"effect_probability": 0.5})
            args = {"width": "standard"}
        assert "width is one of" in session.call("report", {"width": "huge"})
        assert "accepted" in session.call("report", args)
        assert session.done and session.score is not None and session.score.valid
        assert session.call("report", args).startswith("not run:")


def test_the_fit_is_the_kits_fit_and_the_report_is_scored_as_a_submission(
    keyed: tuple[LocalSource, Any],
) -> None:
    source, key = keyed
    spec = CausalGymTRL(source, num_generations=3, settings=ANALYST)
    envs = [spec.environment_factory() for _ in range(3)]
    try:
        for slot, family in enumerate(ANALYST_FAMILIES):
            shown = [env.reset(task_slot=slot) for env in envs]
            assert shown[0] == shown[1] == shown[2]  # one group, one task
            task = envs[0]._session.task
            assert task is not None and task.family.value == family
            d = analyst.parse_readme(task.readme)
            reference = analyst.fit_reference(analyst.read_staged(task.files["data.csv"], d), d)
            fit = envs[0].fit(["pre_treatment"], "ols")
            assert f"estimate {reference.estimate:.4g}," in fit and f"SE {reference.se:.3g}," in fit
            envs[1].fit([], "ols")  # the difference in means
            p = {"effect_probability": 0.9} if family == "null_detect" else {}
            envs[0].report("standard", **p)
            envs[1].report("narrow", **p)
            rewards = analyst_reward([[], [], []], envs)
            answer: dict[str, Any] = {
                "estimate": reference.estimate,
                "ci_lower": reference.ci_lower,
                "ci_upper": reference.ci_upper,
                **p,
            }
            if family == "adjustment":
                answer["adjustment_set"] = list(d.pre_treatment)
            expected = episode_score(generate_task(f"train:{family}:0", key), answer)
            assert rewards[0] == pytest.approx(expected.clipped_reward, rel=1e-9)
            assert rewards[2] == -1.0  # the third rollout never reported
            logged = spec.log[-3:]
            assert logged[0]["fit"]["adjust_for"] == ["pre_treatment"] and logged[0]["valid"]
            assert logged[1]["fit"]["adjust_for"] == [] and logged[1]["report"]["width"] == "narrow"
            assert logged[2]["fit"] is None and not logged[2]["valid"]
    finally:
        spec.close()


def test_nothing_the_toolset_shows_carries_the_key_a_truth_or_an_anchor(
    keyed: tuple[LocalSource, Any],
) -> None:
    """The fit of the pre-treatment columns shows the honest OLS interval, whose width is
    a linear task's anchor by design (anyone can compute it from the files); the hidden
    values are the truths and an expert task's efficiency-bound anchor."""
    source, key = keyed
    shown: list[str] = []
    with TaskSession(source, ANALYST) as session:
        for family in ANALYST_FAMILIES:
            session.start()
            shown += [json.dumps(session.messages), json.dumps(session.tools)]
            for args in (
                {"adjust_for": ["pre_treatment"], "estimator": "aipw"},
                {"adjust_for": ["pre_treatment", "post_treatment"]},
                {"adjust_for": ["__truth__", "key"]},
                {"adjust_for": [], "estimator": "$(cat /proc/self/environ)"},
            ):
                shown.append(session.call("fit", args))
            p = {"effect_probability": 0.5} if family == "null_detect" else {}
            shown.append(session.call("report", {"width": "wide", **p}))
    text = "\n".join(shown)
    assert key.raw.hex() not in text and key.raw.hex().upper() not in text
    for family in ANALYST_FAMILIES:
        hidden = generate_task(f"train:{family}:0", key).hidden
        for estimand in hidden.estimands.values():
            for shape in ("{:.6g}", "{:.8g}", "{!r}"):  # (a structural null's 0 is no secret)
                assert estimand.value == 0 or shape.format(estimand.value) not in text
            if estimand.reference_se is None:  # an expert task: the anchor is hidden
                assert f"{estimand.reference_width:.4g}" not in text


def test_the_analyst_rendering_is_the_readmes_question_and_dictionary(
    keyed: tuple[LocalSource, Any],
) -> None:
    source, _ = keyed
    task = source.next_task()
    shown = analyst_readme(task)
    d = analyst.parse_readme(task.readme)
    for column in (*d.pre_treatment, *d.post_treatment):
        assert f"`{column}`" in shown
    assert ("Functional form" in shown) == d.nonlinear
    assert "```json" not in shown and len(shown) < len(task.readme) / 2
    design = LocalSource(("iv",))
    try:
        with pytest.raises(IntegrationError, match="answers ate, adjustment, null_detect; iv"):
            analyst_readme(design.next_task())
    finally:
        design.close()


def test_trl_sees_two_tools_and_the_reward_runs_the_last_turns_report(
    keyed: tuple[LocalSource, Any],
) -> None:
    tools = [
        name
        for name, _ in inspect.getmembers(CausalGymAnalystEnvironment, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]  # TRL's rule for an environment's tools; no get_reward: analyst_reward is the reward
    assert tools == ["fit", "report"]
    assert not hasattr(CausalGymAnalystEnvironment, "get_reward")
    source, _ = keyed
    spec = CausalGymTRL(source, num_generations=2, settings=ANALYST)
    assert spec.reward_funcs == [analyst_reward]
    a, b = spec.environment_factory(), spec.environment_factory()
    try:
        a.reset(task_slot=0)
        b.reset(task_slot=0)
        a.fit(["pre_treatment"], "ols")
        b.fit(["pre_treatment"], "ols")
        family = a._session.task.family.value  # type: ignore[union-attr]
        args = {
            "width": "standard",
            **({"effect_probability": 0.7} if family == "null_detect" else {}),
        }
        last = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "report", "arguments": args}}],
        }
        # a's last turn wrote a report TRL did not run; b's wrote an unknown argument
        bad = {
            **last,
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "report", "arguments": {"widht": "standard"}},
                }
            ],
        }
        rewards = analyst_reward([[last], [bad]], [a, b])
        assert spec.log[0]["valid"] and rewards[0] == spec.log[0]["clipped_reward"] > -1.0
        assert rewards[1] == -1.0 and not spec.log[1]["valid"]
    finally:
        spec.close()


def test_adapter_settings_take_the_analyst_rendering_for_the_seed_families() -> None:
    settings = adapter_settings({"rendering": "analyst"})
    assert settings.families == ANALYST_FAMILIES
    assert settings.session_settings().rendering == "analyst"
    with pytest.raises(IntegrationError, match="analyst rendering answers ate, adjustment"):
        adapter_settings({"rendering": "analyst", "families": ["ate", "iv"]})
    with pytest.raises(IntegrationError, match="rendering"):
        adapter_settings({"rendering": "brief-ish"})
