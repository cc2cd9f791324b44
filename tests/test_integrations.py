"""The trainer adapters against the trainer libraries themselves (installed from PyPI by
the test extra), on real sandboxes, with rewards checked against the scorer under the
source's exported key."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import skyrl_gym

from causal_gym import generate_task
from causal_gym.reference.analyst import fit_reference, parse_readme, read_staged
from causal_gym.reference.probes import Staged, honest
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scoring.answer import NO_SUBMISSION_REWARD, episode_score
from orchestrator.errors import IntegrationError
from orchestrator.integrations.groups import BOARDS
from orchestrator.integrations.skyrl import ENV_ID, CausalGymEnv, register, skyrl_dataset
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.text_tools import MAX_CALLS, parse_tool_calls
from orchestrator.stream.supply import stream_ids
from tests.support.streams import start_stream

pytestmark = pytest.mark.sandbox


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def honest_answer(files: dict[str, bytes]) -> dict[str, Any]:
    return honest(Staged.parse(files["data.csv"], files["README.md"].decode()))


def expected(key_file: Path, task_id: str, answer: dict[str, Any]) -> tuple[float, float]:
    """(raw, clipped) reward of `answer` on `task_id`, scored by causal_gym itself."""
    key = parse_key_hex(key_file.read_text(), "export")
    score = episode_score(generate_task(task_id, key), answer)
    return score.reward, score.clipped_reward


def test_tool_calls_are_read_from_text_and_bad_ones_explained() -> None:
    text = (
        "Let me look.\n" + call("bash", command="wc -l data.csv")
        + "<tool_call>{not json}</tool_call><tool_call>[1, 2]</tool_call>"
    )  # fmt: skip
    calls = parse_tool_calls(text)
    assert [(c.name, json.loads(c.arguments) if c.arguments else None) for c in calls[:1]] == [
        ("bash", {"command": "wc -l data.csv"})
    ]
    assert "not JSON" in (calls[1].error or "") and '"name"' in (calls[2].error or "")
    flood = parse_tool_calls(call("bash", command="true") * (MAX_CALLS + 5))
    assert len(flood) == MAX_CALLS + 1 and "at most" in (flood[-1].error or "")
    assert parse_tool_calls("no call here") == []
    # unclosed openings after a call: read in one pass, the call alone comes back
    unclosed = parse_tool_calls(call("bash", command="ls") + "<tool_call>{" * 100_000)
    assert [c.name for c in unclosed] == ["bash"]


def test_a_skyrl_env_runs_an_episode_to_done_with_the_scorers_reward(tmp_path: Path) -> None:
    register()
    register()  # again: a no-op
    env = skyrl_gym.make(ENV_ID, env_config={"families": ["ate"]}, extras={"max_turns": 5})
    assert isinstance(env, CausalGymEnv)
    key_file = tmp_path / "local.key"
    assert isinstance(env.source, LocalSource)
    env.source.export_key(str(key_file))
    try:
        messages, info = env.init([{"role": "user", "content": "placeholder row"}])
        assert [m["role"] for m in messages] == ["system", "user"]
        assert "<tools>" in messages[0]["content"] and "submit_answer" in messages[0]["content"]
        assert "README.md" in messages[1]["content"] and info["family"] == "ate"
        task = env.session.task
        assert task is not None

        looked = env.step("I will count the rows.\n" + call("bash", command="wc -l < data.csv"))
        assert not looked["done"] and looked["reward"] == 0.0
        shown = looked["observations"][0]["content"]
        assert shown.startswith("<tool_response>") and str(task.n_rows + 1) in shown

        nothing = env.step("The effect is probably positive.")
        assert not nothing["done"] and "No tool was called" in nothing["observations"][0]["content"]

        answer = honest_answer(dict(task.files))
        wrong = env.step(call("submit_answer", **{**answer, "ci_lower": 9.0, "ci_upper": 1.0}))
        assert not wrong["done"] and "Submission rejected" in wrong["observations"][0]["content"]

        final = env.step(call("submit_answer", **answer))
        task_id = next(stream_ids(("ate",), 0, 1))
        raw, clipped = expected(key_file, task_id, answer)
        assert final["done"] and final["observations"] == []
        assert final["reward"] == pytest.approx(clipped, rel=1e-12)
        assert final["metadata"]["reward_raw"] == pytest.approx(raw, rel=1e-12)
        assert final["metadata"]["invalid_attempts"] == 1 and final["metadata"]["turns"] == 4
        assert env.get_metrics()["valid_submission"] == 1.0
        assert env.session.sandbox is None  # closed when the episode ended
    finally:
        env.close()


def test_a_skyrl_episode_without_a_submission_ends_at_its_turn_budget() -> None:
    env = CausalGymEnv({"families": ["null_detect"], "max_turns": 2})
    try:
        env.init(None)
        assert not env.step("thinking")["done"]
        last = env.step(call("python", code="print(1 + 1)"))
        assert last["done"] and last["reward"] == NO_SUBMISSION_REWARD
        assert env.get_metrics()["valid_submission"] == 0.0
    finally:
        env.close()


def test_the_samples_of_a_skyrl_row_answer_one_task_each_scored_once(tmp_path: Path) -> None:
    import pandas as pd

    rows = pd.read_parquet(skyrl_dataset(tmp_path / "train.parquet", 2))
    assert list(rows["task_slot"]) == [0, 1] and set(rows["env_class"]) == {ENV_ID}
    config = {"families": ["adjustment"], "group_size": 2, "max_turns": 2}
    # what SkyRL does with a row's samples: an env each, the row's columns as extras
    envs = [CausalGymEnv(config, {"task_slot": slot}) for slot in (0, 0, 1, 0)]
    try:
        first = [env.init(None)[0][1]["content"] for env in envs]
        tasks = [env.session.task for env in envs]
        assert first[0] == first[1] and first[2] != first[0]  # slot 0's pair, slot 1
        assert first[3] != first[0]  # slot 0's group was used up: a new task
        assert tasks[0] is not None and tasks[1] is not None
        assert envs[0].session.handle != envs[1].session.handle  # a handle per sample
        assert envs[0].board is envs[2].board and envs[0].board.tasks_pulled == 3
        answer = honest_answer(dict(tasks[0].files))
        rewards = [env.step(call("submit_answer", **answer))["reward"] for env in envs[:2]]
        assert rewards[0] == rewards[1] > NO_SUBMISSION_REWARD  # each handle scored once
        alone = CausalGymEnv(config)  # no slot: a group of its own
        assert alone.board is not envs[0].board and alone.board.size == 1
    finally:
        for env in envs:
            env.close()
        BOARDS.close()


def test_bad_adapter_settings_are_refused_in_one_line() -> None:
    with pytest.raises(IntegrationError, match="accepted families are"):
        CausalGymEnv({"families": ["ate", "nonsense"]})
    with pytest.raises(IntegrationError, match="needs token_file"):
        CausalGymEnv({"stream_url": "http://127.0.0.1:1"})
    with pytest.raises(IntegrationError, match="needs stream_url"):
        CausalGymEnv({"token": "abc"})
    with pytest.raises(IntegrationError, match=r"^causal-gym settings: familys: Extra inputs"):
        CausalGymEnv({"familys": ["ate"]})
    with pytest.raises(IntegrationError, match=r"max_turns: .*accepted keys: stream_url"):
        CausalGymEnv({"max_turns": 0})


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_a_skyrl_env_on_a_real_stream_gets_the_streams_reward(tmp_path: Path) -> None:
    stream = start_stream("skyrl", tmp_path / "state", "--workers", "1")
    try:
        token_file = tmp_path / "trainer.token"
        token_file.write_text(stream.mint("skyrl-trainer") + "\n")
        key_file = tmp_path / "stream.key"
        assert stream.cli("export-key", "--to", str(key_file)).returncode == 0
        env = CausalGymEnv(
            {"stream_url": stream.url, "token_file": str(token_file), "max_turns": 3}
        )
        try:
            env.init(None)
            task = env.session.task
            assert task is not None
            answer = honest_answer(dict(task.files))
            final = env.step(call("submit_answer", **answer))
            assert final["done"]
        finally:
            env.close()
        key = parse_key_hex(key_file.read_text(), "export")
        first_ids = itertools.islice(stream_ids(("ate", "adjustment", "null_detect"), 0, 1), 6)
        by_hash = {generate_task(i, key).public.sha256("data.csv"): i for i in first_ids}
        task_id = by_hash[hashlib.sha256(task.files["data.csv"]).hexdigest()]
        raw, clipped = expected(key_file, task_id, answer)
        assert final["reward"] == pytest.approx(clipped, rel=1e-12)
        assert final["metadata"]["reward_raw"] == pytest.approx(raw, rel=1e-12)
        # the same stream in the analyst toolset: fit, then report, read from the text
        analyst_env = CausalGymEnv(
            {"stream_url": stream.url, "token_file": str(token_file), "max_turns": 3,
             "rendering": "analyst"}
        )  # fmt: skip
        try:
            messages, _ = analyst_env.init(None)
            assert (
                '"name": "fit"' in messages[0]["content"] and "bash" not in messages[0]["content"]
            )
            second = analyst_env.session.task
            assert second is not None
            looked = analyst_env.step(call("fit", adjust_for=["pre_treatment"], estimator="ols"))
            assert not looked["done"] and "estimate " in looked["observations"][0]["content"]
            p = {"effect_probability": 0.9} if second.family.value == "null_detect" else {}
            ended = analyst_env.step(call("report", width="standard", **p))
            assert ended["done"] and ended["metadata"]["valid_submission"] == 1.0
        finally:
            analyst_env.close()
        second_id = by_hash.get(hashlib.sha256(second.files["data.csv"]).hexdigest())
        assert second_id is not None
        d = parse_readme(second.readme)
        fit = fit_reference(read_staged(second.files["data.csv"], d), d)
        reported = {
            "estimate": fit.estimate,
            "ci_lower": fit.ci_lower,
            "ci_upper": fit.ci_upper,
            **p,
        }
        if second.family.value == "adjustment":
            reported["adjustment_set"] = list(d.pre_treatment)
        assert ended["reward"] == pytest.approx(
            expected(key_file, second_id, reported)[1], rel=1e-9
        )
        with stream.client(token_file.read_text().strip()) as client:
            assert client.me().tasks_scored == 2
    finally:
        BOARDS.close()  # the env's stream client (the process's, shared by its envs)
        stream.stop()
