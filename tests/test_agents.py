"""Agent episodes end to end: a real chat-completions HTTP server with scripted replies,
the scripted agents, and bad agent behaviour turned into statuses, never crashes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from causal_gym import generate_task, resolve_key
from causal_gym.contracts.families import contract_of
from causal_gym.reference import analyst
from causal_gym.reference.posterior import NULL_DETECT_PRIOR, posterior_answer
from causal_gym.reference.probes import Staged, honest
from causal_gym.scoring.reward import score_submission
from causal_gym.scoring.validate import validate_submission
from causal_gym.versions import reward_version
from orchestrator.agents import (
    AgentSpecError,
    EpisodeConfig,
    EpisodeStatus,
    OpenAIPolicyConfig,
    load_policy,
    run_episode,
)
from orchestrator.agents.scripted import EscapePolicy
from orchestrator.records.report import TOOL_CHOICE_COLUMN, baseline_table, render_markdown
from orchestrator.records.summary import RunSummary
from orchestrator.sandbox import make_sandbox
from orchestrator.sandbox.netprobe import HostListener, probe_from_host
from tests.conftest import reference_fit
from tests.support.cli import orchestrator_cli
from tests.support.docker_env import require_docker
from tests.support.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    ServerScript,
    assistant_turns,
    tool_outputs,
)
from tests.support.summaries import make_summary

pytestmark = pytest.mark.sandbox

KEY = resolve_key(environ={})
TASK = generate_task("train:adjustment:8", KEY)
HONEST = honest(
    Staged.parse(TASK.public.files["data.csv"], TASK.public.files["README.md"].decode())
)


def openai_policy(server: ScriptedOpenAIServer, **overrides: Any):
    config = OpenAIPolicyConfig(
        base_url=server.base_url,
        model="scripted",
        api_key_env="SCRIPTED_KEY",
        backoff_s=0.05,
        **overrides,
    )
    return load_policy("openai", config)


def episode(
    policy, config: EpisodeConfig | None = None, task=TASK, kind: str = "local", image=None
):
    """One episode; the policy is closed after it (a user policy's process ends)."""
    with make_sandbox(kind, image=image) as box, policy:
        box.open(dict(task.public.files))
        return run_episode(
            task.public.to_wire("test-handle-0001"),
            box,
            policy,
            config or EpisodeConfig(max_turns=8),
        )


def explore_invalid_valid(messages: list[dict[str, Any]]) -> Reply:
    turn = assistant_turns(messages)
    if turn == 0:
        return Reply(tool="bash", arguments={"command": "head -c 300 data.csv; wc -l data.csv"})
    if turn == 1:
        return Reply(
            tool="python",
            arguments={"code": "import pandas as pd\nprint(pd.read_csv('data.csv').shape)"},
        )
    if turn == 2:
        return Reply(tool="submit_answer", arguments={**HONEST, "ci_lower": 9.0, "ci_upper": 1.0})
    return Reply(tool="submit_answer", arguments=HONEST)


def test_openai_agent_explores_fails_once_then_submits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-scripted-secret")
    with ScriptedOpenAIServer(ServerScript(explore_invalid_valid)) as server:
        result = episode(openai_policy(server, temperature=0.2, max_tokens=512))
        requests = server.chat_requests
    assert result.status is EpisodeStatus.SUBMITTED
    assert result.turns == 4 and result.invalid_attempts == 1
    assert result.submission == HONEST
    assert result.usage.reported and result.usage.total_tokens == 4 * 120
    assert result.tool_s > 0 and result.model_s > 0 and result.wall_s >= result.tool_s
    outputs = tool_outputs(result.transcript)
    assert "exit code 0" in outputs[0] and "data.csv" in outputs[0]
    assert "(" in outputs[1] and "exit code 0" in outputs[1]
    assert "ci_lower (9.0) must be <= ci_upper (1.0)" in outputs[2]
    assert outputs[3].startswith("Submission accepted")
    assert [r["auth"] for r in requests] == ["Bearer sk-scripted-secret"] * 4
    body = requests[0]["body"]
    assert body["temperature"] == 0.2 and body["max_tokens"] == 512
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["bash", "python", "submit_answer"]
    submit_schema = body["tools"][2]["function"]["parameters"]
    assert set(submit_schema["required"]) == {"estimate", "ci_lower", "ci_upper", "adjustment_set"}
    scored = score_submission(
        TASK.hidden,
        validate_submission(TASK.public.family, result.submission, TASK.public.columns).submission,
    )
    assert scored.validity == 1.0


def never_calls_a_tool(messages: list[dict[str, Any]]) -> Reply:
    return Reply(text="The treatment probably helps.")


FORCED = {"type": "function", "function": {"name": "submit_answer"}}


@pytest.mark.parametrize(
    ("choice", "sent", "status"),
    [
        ("auto", ["auto"] * 3, EpisodeStatus.NO_SUBMISSION),
        ("submit_last", ["auto", "auto", FORCED], EpisodeStatus.SUBMITTED),
        ("required", ["required"] * 3, EpisodeStatus.NO_SUBMISSION),
    ],
)
def test_tool_choice_forces_the_submission_on_the_last_turn_only(
    choice: str, sent: list[Any], status: EpisodeStatus
) -> None:
    # A model that never calls a tool; the server constrains a reply to a tool it is
    # told to call (as llama.cpp's grammar does), so only a named submit_answer lands.
    script = ServerScript(
        never_calls_a_tool, named_tool=lambda name: Reply(tool=name, arguments=HONEST)
    )
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server, tool_choice=choice), EpisodeConfig(max_turns=3))
        requests = server.chat_requests
    assert [r["body"]["tool_choice"] for r in requests] == sent
    assert result.status is status and result.turns == 3
    assert (result.submission == HONEST) is (choice == "submit_last")


def test_an_unknown_tool_choice_is_refused_in_one_line() -> None:
    with pytest.raises(ValidationError, match="tool_choice"):
        OpenAIPolicyConfig(base_url="http://127.0.0.1:1/v1", model="m", tool_choice="always")
    done = orchestrator_cli(
        "episode", "train:ate:0", "--agent", "openai", "--base-url", "http://127.0.0.1:1/v1",
        "--model", "m", "--tool-choice", "always",
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: unknown tool choice 'always': accepted are auto, required, submit_last"
    ]


def test_the_tool_choice_is_in_the_report_and_the_baseline_table() -> None:
    def summary(model: str, choice: str | None) -> RunSummary:
        return make_summary(
            agent="openai" if choice else "reference", model=model, tool_choice=choice,
            by_family={"ate": 0.5},
        )  # fmt: skip

    assert TOOL_CHOICE_COLUMN not in baseline_table([summary("ref", None)])[0]
    header, forced, scripted = baseline_table([summary("smollm2", "submit_last"),
                                               summary("ref", None)])  # fmt: skip
    names = [c.strip() for c in header.split("\n")[0].strip("|").split("|")]
    rule = header.split("\n")[1].strip("|").split("|")
    assert len(rule) == len(names) and rule[names.index("Sample")].strip() == "---"
    column = names.index(TOOL_CHOICE_COLUMN)
    assert [c.strip() for c in forced.strip("|").split("|")][column] == "`submit_last`"
    assert [c.strip() for c in scripted.strip("|").split("|")][column] == "-"
    assert "Tool choice `submit_last`" in render_markdown(summary("smollm2", "submit_last"))


def test_server_errors_are_retried_then_succeed() -> None:
    script = ServerScript(explore_invalid_valid, fail_first=2)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server))
    assert result.status is EpisodeStatus.SUBMITTED
    assert result.model_retries == 2


#: What llama-cpp-python's server answers, with HTTP 500, to a message it will not
#: take (an assistant turn with "content": null and tool calls, before our fix).
LLAMA_CPP_REFUSAL = (
    "1 validation error for CreateChatCompletionRequest\nmessages.2.content\n"
    "  Input should be a valid string [type=string_type, input_value=None]"
)


def test_a_deterministic_refusal_is_not_retried_whatever_its_status() -> None:
    script = ServerScript(explore_invalid_valid, fail_first=100, fail_message=LLAMA_CPP_REFUSAL)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server, max_retries=4))
        calls = len(server.chat_requests)
    assert result.status is EpisodeStatus.MODEL_ERROR and not result.transient
    assert calls == 1 and result.model_retries == 0
    assert "not retried" in (result.message or "") and "HTTP 500" in (result.message or "")


def test_transient_failures_are_retried_within_a_time_budget() -> None:
    script = ServerScript(explore_invalid_valid, fail_first=2, fail_status=503)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server))
    assert result.status is EpisodeStatus.SUBMITTED and result.model_retries == 2
    proxy = "502 Bad Gateway: upstream sent an invalid response"  # transient, for all its words
    script = ServerScript(explore_invalid_valid, fail_first=2, fail_status=502, fail_message=proxy)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server))
    assert result.status is EpisodeStatus.SUBMITTED and result.model_retries == 2
    script = ServerScript(explore_invalid_valid, fail_first=1000, fail_status=503)
    started = time.monotonic()
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server, max_retries=1000, retry_budget_s=1.0))
        calls = len(server.chat_requests)
    assert result.status is EpisodeStatus.MODEL_ERROR and result.transient
    assert 3 <= calls <= 6  # backoff 0.05, 0.1, 0.2, 0.4 fits in 1 s; 0.8 more would not
    assert time.monotonic() - started < 10


def test_server_that_keeps_failing_is_a_model_error() -> None:
    script = ServerScript(explore_invalid_valid, fail_first=100)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server, max_retries=3))
        calls = len(server.chat_requests)
    assert result.status is EpisodeStatus.MODEL_ERROR
    assert result.model_retries == 3 and calls == 4
    assert "after 3 retries" in (result.message or "")


def test_rate_limits_are_retried_and_counted() -> None:
    script = ServerScript(explore_invalid_valid, fail_first=3, fail_status=429)
    with ScriptedOpenAIServer(script) as server:
        result = episode(openai_policy(server, max_retries=3))
        statuses = len(server.chat_requests)
    assert result.status is EpisodeStatus.SUBMITTED and result.model_retries == 3
    assert statuses == 3 + 4  # three refusals, then the four turns


def test_per_tool_deadline_and_output_cap() -> None:
    def slow_then_loud(messages: list[dict[str, Any]]) -> Reply:
        turn = assistant_turns(messages)
        if turn == 0:
            return Reply(tool="bash", arguments={"command": "sleep 60; echo never"})
        if turn == 1:
            return Reply(tool="bash", arguments={"command": "yes | head -c 5000"})
        return Reply(tool="submit_answer", arguments=HONEST)

    config = EpisodeConfig(max_turns=5, tool_timeout_s=2, tool_output_chars=300)
    with ScriptedOpenAIServer(ServerScript(slow_then_loud)) as server:
        started = time.monotonic()
        result = episode(openai_policy(server), config)
        elapsed = time.monotonic() - started
    slow, loud, _ = tool_outputs(result.transcript)
    assert slow.startswith("timed out (killed at the deadline)") and "never" not in slow
    assert elapsed < 2 + 10
    assert "stdout:\n" + "y\n" * 150 + "\n[... 4700 chars cut]" in loud
    assert result.status is EpisodeStatus.SUBMITTED


def test_unreachable_server_is_a_model_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = OpenAIPolicyConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=2, backoff_s=0.01
    )
    result = episode(load_policy("openai", config))
    assert result.status is EpisodeStatus.MODEL_ERROR and "APIConnectionError" in result.message


def test_hanging_server_ends_at_the_deadline() -> None:
    script = ServerScript(explore_invalid_valid, hang_seconds=30)
    with ScriptedOpenAIServer(script) as server:
        started = time.monotonic()
        result = episode(openai_policy(server), EpisodeConfig(episode_timeout_s=3))
        elapsed = time.monotonic() - started
    assert result.status is EpisodeStatus.TIMEOUT
    assert elapsed < 3 + 5


def test_bad_agent_behaviour_becomes_statuses() -> None:
    def chatter(messages: list[dict[str, Any]]) -> Reply:
        return Reply(text="I think the effect is positive.")

    with ScriptedOpenAIServer(ServerScript(chatter)) as server:
        result = episode(openai_policy(server), EpisodeConfig(max_turns=3))
    assert result.status is EpisodeStatus.NO_SUBMISSION and result.turns == 3
    assert "turn budget of 3 exhausted" in result.message
    assert sum(1 for m in result.transcript if m["role"] == "user") == 1 + 3  # nudges

    def clumsy(messages: list[dict[str, Any]]) -> Reply:
        turn = assistant_turns(messages)
        if turn == 0:
            return Reply(tool="bash", raw_arguments='{"command": "ls"')  # malformed JSON
        if turn == 1:
            return Reply(tool="rm_rf", arguments={"path": "/"})
        if turn == 2:
            return Reply(tool="submit_answer", raw_arguments="my answer is 0.3")
        if turn == 3:
            return Reply(tool="bash", arguments={"command": "ls", "extra": 1})
        return Reply(tool="submit_answer", arguments=HONEST)

    with ScriptedOpenAIServer(ServerScript(clumsy)) as server:
        result = episode(openai_policy(server))
    outputs = tool_outputs(result.transcript)
    assert outputs[0].startswith("error: tool arguments are not valid JSON")
    assert "unknown tool 'rm_rf'" in outputs[1]
    assert "submission is not valid JSON" in outputs[2]
    assert "takes exactly one string argument 'command'" in outputs[3]
    assert result.status is EpisodeStatus.SUBMITTED and result.invalid_attempts == 1


@pytest.mark.parametrize(
    "task_id",
    [
        "train:ate:21",
        "train:adjustment:21",
        "train:null_detect:21",
        "eval-expert-v1:ate:4",
        "eval-expert-v1:null_detect:5",
    ],
)
def test_reference_agent_scores_like_the_audit_reference(task_id: str) -> None:
    """In the sandbox: the kit (analyst.py, flexible.py, posterior.py) written, the
    reference run, its answer submitted. An expert task's answer is flexible.py's
    AIPW (so is a nonlinear real task's: train:adjustment:21 is one, on Card's table),
    the same to the last digits as the fit generation stored; its width is the
    reference's, not the anchor's (the efficiency bound, or on a linear task the
    optimal OLS's, sits below it)."""
    task = generate_task(task_id, KEY)
    result = episode(load_policy("reference"), task=task)
    kit = contract_of(task.public.family).reference_kit
    assert result.status is EpisodeStatus.SUBMITTED and result.turns == len(kit) + 2
    expected = honest(
        Staged.parse(task.public.files["data.csv"], task.public.files["README.md"].decode())
    )
    assert set(result.submission) == set(expected)
    for name, value in expected.items():
        if isinstance(value, float):
            assert result.submission[name] == pytest.approx(value, rel=1e-9), name
        else:
            assert result.submission[name] == value, name
    got = score_submission(
        task.hidden,
        validate_submission(task.public.family, result.submission, task.public.columns).submission,
    )
    want = score_submission(
        task.hidden,
        validate_submission(task.public.family, expected, task.public.columns).submission,
    )
    assert got.reward == pytest.approx(want.reward, rel=1e-9)
    if "- Functional form:" in task.public.files["README.md"].decode():  # nonlinear
        estimate, se = reference_fit(task)  # the flexible fit on the staged bytes
        if task.public.family.value == "null_detect":  # its posterior, under the prior
            width = 2 * analyst.Z * se
            estimate = posterior_answer(NULL_DETECT_PRIOR, estimate, se, width)["estimate"]
        assert result.submission["estimate"] == pytest.approx(estimate, rel=1e-9)
        assert got.width_ratio > 1.0
    else:  # the reference's set holds instruments and decoys: a little wider than r
        assert 0.95 < got.width_ratio < 1.3


@pytest.mark.parametrize(
    ("family", "probes"),
    [
        ("cate", ("pooled-for-every-level", "per-level-difference-in-means", "constant")),
        ("mediation", ("total-as-direct", "mediator-as-confounder", "narrow")),
        ("obs_vs_rct", ("observational-only", "trial-only", "always-biased")),
    ],
)
def test_multi_estimand_agents_reference_and_probes(family: str, probes: tuple[str, ...]) -> None:
    """The scripted agents of the multi-estimand families, end to end in a sandbox:
    the reference copies estimands.py and submits exactly the library's reference
    answer; each of the family's probes scores below it (obs_vs_rct: summed over a
    confounded and an unconfounded task, since calling every extract biased only
    loses on the unconfounded ones); a probe for another family gives up with the
    reason instead of submitting."""
    from causal_gym.reference.answer import files_answer

    tasks = [generate_task(f"train:{family}:{i}", KEY) for i in range(20, 40)]
    if family == "obs_vs_rct":
        by_class = {t.hidden.effect_class.value: t for t in reversed(tasks)}
        tasks = [by_class["confounded"], by_class["unconfounded"]]
    else:
        tasks = tasks[1:2]
    spec = contract_of(family)
    totals = dict.fromkeys(("reference", *probes), 0.0)
    for task in tasks:
        public = task.public

        def checked(submission: dict[str, Any], public: Any = public) -> Any:
            valid = validate_submission(public.family, submission, public.columns, public.estimands)
            assert valid.ok, valid.errors
            return valid.submission

        result = episode(load_policy("reference"), task=task)
        assert (
            result.status is EpisodeStatus.SUBMITTED and result.turns == 5
        )  # 3 files, run, submit
        got = spec.intervals(checked(result.submission))
        want = spec.intervals(checked(files_answer(dict(public.files))))
        assert got.keys() == want.keys() == task.hidden.estimands.keys()
        assert all(got[name] == pytest.approx(want[name], rel=1e-9) for name in want)
        for agent in totals:
            run = result if agent == "reference" else episode(load_policy(agent), task=task)
            assert run.status is EpisodeStatus.SUBMITTED, (agent, run.message)
            totals[agent] += score_submission(task.hidden, checked(run.submission)).reward
    if family == "obs_vs_rct":
        # Two tasks decide nothing about the pool-or-trial trade-off now that half the
        # biases are small (generator 3): the audit shows each probe below honest over
        # 1,200 tasks. Here every probe must answer exactly as the library's does.
        from causal_gym.reference import estimand_probes
        from causal_gym.reference.estimands import Analysis

        for task in tasks:
            for agent in probes:
                run = episode(load_policy(agent), task=task)
                probe = estimand_probes.PROBES[agent.replace("-", "_")]
                want = probe(Analysis.parse(dict(task.public.files)))
                assert run.submission == pytest.approx(want, rel=1e-9), agent
    else:
        assert all(totals[a] < totals["reference"] for a in probes), totals
    other = "trial-only" if family != "obs_vs_rct" else "total-as-direct"
    refused = episode(load_policy(other), task=tasks[0])
    assert refused.status is not EpisodeStatus.SUBMITTED
    assert "answers" in "".join(str(m.get("content")) for m in refused.transcript)


@pytest.mark.parametrize("family", ["iv", "did", "rdd"])
def test_design_agents_reference_and_probes(family: str) -> None:
    """A design family end to end in a sandbox: the reference writes its kit
    (designs.py, the family's modules, answer.py) and submits exactly the library's
    answer for the estimand the task names; each probe the contract names is an agent
    (its name hyphenated) that submits the kit's probe answer; another family's probe
    gives up instead of submitting."""
    from causal_gym.reference.designs import files_answer

    task = generate_task(f"train:{family}:5", KEY)
    files = dict(task.public.files)
    spec = contract_of(family)
    result = episode(load_policy("reference"), task=task)
    assert result.status is EpisodeStatus.SUBMITTED and result.turns == len(spec.reference_kit) + 2
    assert result.submission == pytest.approx(files_answer(files), rel=1e-9)
    assert result.submission["estimand"] == task.public.estimands[0]
    for probe in spec.extra_probes:
        run = episode(load_policy(probe.replace("_", "-")), task=task)
        assert run.status is EpisodeStatus.SUBMITTED, (probe, run.message)
        # (a global quartic is ill-conditioned: another process's BLAS moves its last digits)
        assert run.submission == pytest.approx(files_answer(files, probe), rel=1e-6), probe
    other = "twfe" if family != "did" else "wald-2sls"
    refused = episode(load_policy(other), task=task)
    assert refused.status is not EpisodeStatus.SUBMITTED


@pytest.mark.parametrize("family", ["cate", "mediation", "obs_vs_rct"])
def test_the_bayes_prior_agent_answers_as_the_audits_probe(family: str) -> None:
    """`--agent bayes-prior` on a multi-estimand task: it copies the posterior and the
    generator's priors into the sandbox beside its kit and submits exactly what the
    audit's probe answers (reference/estimand_probes.py), on a generator-3 train task
    and a generator-2 frozen one (it tells them by the README's effect-size line)."""
    from causal_gym.reference import estimand_probes
    from causal_gym.reference.estimands import Analysis

    for task_id in (f"train:{family}:5", f"eval-v2:{family}:5"):
        task = generate_task(task_id, KEY)
        run = episode(load_policy("bayes-prior"), task=task)
        assert run.status is EpisodeStatus.SUBMITTED, (task_id, run.message)
        analysis = Analysis.parse(dict(task.public.files))
        want = flat(estimand_probes.bayes_prior(analysis))
        assert flat(run.submission) == pytest.approx(want, rel=1e-9), task_id
        assert want != flat(estimand_probes.honest(analysis))


def flat(answer: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested answer (cate's effects, mediation's parts) as one flat mapping."""
    out: dict[str, Any] = {}
    for key, value in answer.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_probe_agents_score_below_the_reference() -> None:
    rewards: dict[str, float] = {}
    for agent in ("reference", "diff-in-means", "post-treatment", "constant", "narrow"):
        result = episode(load_policy(agent))
        assert result.status is EpisodeStatus.SUBMITTED, (agent, result.message)
        checked = validate_submission(TASK.public.family, result.submission, TASK.public.columns)
        rewards[agent] = score_submission(TASK.hidden, checked.submission).reward
    assert all(rewards[a] < rewards["reference"] for a in rewards if a != "reference"), rewards


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_escape_probe_finds_nothing(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    image = require_docker() if kind == "docker" else None
    monkeypatch.setenv("CAUSAL_GYM_KEY", "e7" * 32)
    with HostListener() as listener:
        targets = tuple(listener.targets())
        assert set(probe_from_host(list(targets)).values()) == {"connected"}  # reachable
        before = listener.reached(len(targets))
        assert before == len(targets)
        result = episode(EscapePolicy(targets), kind=kind, image=image)
        assert listener.settled() == before
    assert result.status is EpisodeStatus.SUBMITTED
    findings = json.loads(result.agent_notes.removeprefix("escape findings: "))
    assert findings == {"network": [], "key": [], "generator": [], "host_files": []}


def test_user_policies_load_by_path_and_bad_specs_are_clear(tmp_path: Path) -> None:
    source = tmp_path / "my_agent.py"
    source.write_text(
        "from orchestrator.agents import AgentTurn, Policy, ToolCall\n"
        "class Guesser(Policy):\n"
        "    def next_turn(self, messages, deadline_s):\n"
        "        return AgentTurn(text=None, tool_calls=(ToolCall('c0', 'submit_answer',\n"
        '            \'{"estimate": 0, "ci_lower": -1, "ci_upper": 1, "adjustment_set": []}\'),))\n'
    )
    result = episode(load_policy(f"python:{source}:Guesser"))
    assert result.status is EpisodeStatus.SUBMITTED and result.agent == f"python:{source}:Guesser"
    broken = tmp_path / "broken.py"
    broken.write_text("class Boom:\n    pass\n")
    for spec, fragment in (
        (f"python:{broken}:Boom", "not a subclass"),
        (f"python:{tmp_path}/absent.py:X", "no Python file"),
        ("python:onlytwo", "python:PATH_OR_MODULE:ClassName"),
        ("gpt", "accepted agents are openai, reference"),
    ):
        with pytest.raises(AgentSpecError, match=fragment):
            load_policy(spec)


def test_a_crashing_user_policy_is_an_agent_error(tmp_path: Path) -> None:
    source = tmp_path / "crash.py"
    source.write_text(
        "from orchestrator.agents import Policy\n"
        "class Crash(Policy):\n"
        "    def next_turn(self, messages, deadline_s):\n"
        "        raise RuntimeError('boom')\n"
    )
    result = episode(load_policy(f"python:{source}:Crash"))
    assert result.status is EpisodeStatus.AGENT_ERROR and "RuntimeError: boom" in result.message


def test_episode_cli_prints_the_scored_record() -> None:
    proc = orchestrator_cli("episode", "eval-v1:ate:3", "--agent", "reference", "--transcript")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "submitted" and record["turns"] == 6  # 4 kit files
    assert 0.95 < record["width_ratio"] < 1.3 and record["reward"] > 0
    assert record["reward_version"] == reward_version("eval-v1")
    assert [m["role"] for m in record["transcript"]][:2] == ["system", "user"]
    bad = orchestrator_cli("episode", "eval-v1:ate:3", "--agent", "openai")
    assert bad.returncode == 2 and "--base-url and --model" in bad.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop, and so the closed ancestor, is root's")
def test_the_policy_host_reaches_its_code_under_a_closed_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout under `mktemp -d` (mode 0700) is closed to the policy's uid; the
    launcher opens exactly the code paths, nothing beside them."""
    from orchestrator.agents import process_policy

    closed = tmp_path / "closed"
    code = closed / "checkout"
    code.mkdir(parents=True)
    (code / "module.py").write_text("VALUE = 1\n")
    (closed / "secret.txt").write_text("not for the policy\n")
    closed.chmod(0o700)
    monkeypatch.setattr(process_policy, "_code_paths", lambda: [code])

    def as_policy(*command: str) -> subprocess.CompletedProcess[str]:
        argv = [*process_policy._launcher(), *command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    assert as_policy("cat", str(code / "module.py")).stdout == "VALUE = 1\n"
    assert as_policy("cat", str(closed / "secret.txt")).returncode != 0
    monkeypatch.setattr(process_policy, "_code_paths", lambda: [])
    assert as_policy("cat", str(code / "module.py")).returncode != 0  # what the fix fixes


JUNK_REPORTER = """
from orchestrator.agents import AgentTurn, Policy, ToolCall
class Junk(Policy):
    def next_turn(self, messages, deadline_s):
        call = ToolCall('c0', 'bash', '{"command": "true"}')
        return AgentTurn(text="x" * 100_462, tool_calls=(call,), usage=USAGE, retries=RETRIES)
"""


@pytest.mark.parametrize(
    ("usage", "retries", "fragment"),
    [
        ({"prompt_tokens": "lots"}, 0, "prompt_tokens: Input should be a valid integer"),
        ({"prompt_tokens": 3e30}, 0, "prompt_tokens: Input should be a valid integer"),
        ({"completion_tokens": -21}, 0, "completion_tokens: Input should be greater than"),
        ({"total_tokens": True}, 0, "total_tokens: Input should be a valid integer"),
        (None, "many", "invalid literal for int"),
        (None, 10**9, "retries"),
    ],
)
def test_junk_a_policy_reports_about_itself_is_its_own_agent_error(
    tmp_path: Path, usage: Any, retries: Any, fragment: str
) -> None:
    """Usage and retries are parsed by a bounded schema: junk ends the episode as an
    agent_error (never retried), not a sandbox error that buys the policy attempts."""
    source = tmp_path / "junk.py"
    source.write_text(f"USAGE = {usage!r}\nRETRIES = {retries!r}\n" + JUNK_REPORTER)
    result = episode(load_policy(f"python:{source}:Junk"))
    assert result.status is EpisodeStatus.AGENT_ERROR, result.message
    assert fragment in (result.message or ""), result.message
    assert result.usage.prompt_tokens == 0 and result.model_retries == 0


def test_stored_text_is_capped_with_its_length(tmp_path: Path) -> None:
    source = tmp_path / "junk.py"
    source.write_text("USAGE = {'prompt_tokens': 7, 'completion_tokens': 3}\nRETRIES = 0\n"
                      + JUNK_REPORTER)  # fmt: skip
    result = episode(load_policy(f"python:{source}:Junk"), EpisodeConfig(max_turns=2))
    assert result.status is EpisodeStatus.NO_SUBMISSION
    assert result.usage.prompt_tokens == 14 and result.usage.completion_tokens == 6
    said = [m["content"] for m in result.transcript if m["role"] == "assistant"]
    assert len(said) == 2
    for text in [*said, result.agent_notes]:
        assert len(text) < 17_000 and text.endswith("[... cut: 100462 chars in all]")


STATEFUL = """
import os
from orchestrator.agents import AgentTurn, Policy, ToolCall
class Stateful(Policy):
    def next_turn(self, messages, deadline_s):
        seen = os.path.exists(MARK)
        with open(MARK, "w") as handle:
            handle.write("carried")
        answer = '{"estimate": 0, "ci_lower": -1, "ci_upper": 1, "adjustment_set": []}'
        return AgentTurn(text=f"seen={seen}", tool_calls=(ToolCall('c0', 'submit_answer', answer),))
"""


def test_a_user_policy_carries_no_state_from_one_attempt_to_the_next(tmp_path: Path) -> None:
    """Each policy process gets a private /tmp: what one attempt leaves there, the
    next one (and the host) never sees."""
    mark = f"/tmp/causal-gym-carried-{os.getpid()}"
    source = tmp_path / "stateful.py"
    source.write_text(f"MARK = {mark!r}\n" + STATEFUL)
    first = episode(load_policy(f"python:{source}:Stateful"))
    second = episode(load_policy(f"python:{source}:Stateful"))
    assert first.status is second.status is EpisodeStatus.SUBMITTED
    assert (first.agent_notes, second.agent_notes) == ("seen=False", "seen=False")
    assert not Path(mark).exists()
