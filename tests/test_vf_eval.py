"""Real `vf-eval causal_gym` runs against a scripted OpenAI-compatible streaming server.

The scripted model explores with bash, submits one invalid answer, then the honest
reference answer; the reward in the trace must equal `causal-gym score` on the same
submission. Docker runs happen wherever an engine runs (always in CI).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.reference import parse_readme, read_staged, reference_submission
from causal_gym.reference.answer import honest_fit
from causal_gym.rng_keys import parse_key_hex, resolve_key
from causal_gym.splits.manifest import load_manifest
from orchestrator.sandbox.netprobe import HostListener
from tests.support.docker_env import require_docker
from tests.support.openai_server import Reply, assistant_turns, tool_outputs
from tests.support.vf_run import run_vf_eval

pytestmark = pytest.mark.vf

INVALID = {"estimate": 1.0, "ci_lower": 2.0, "ci_upper": 1.0}
#: A harmless value put in vf-eval's environment: the subprocess runtime passes the
#: host environment through, so the probe must find it there (the control that shows
#: the probe can see a leak); a container must not.
MARKER = "causal-gym-probe-marker-" + uuid.uuid4().hex


def probe(secret: str, targets: list[tuple[str, int]]) -> str:
    """List the workspace, check the toolchain, try the host listener, and count the
    environment values (of every visible process) equal to the marker or the secret.
    Values are compared by sha256, so the secret itself never enters the transcript."""
    digests = {
        name: hashlib.sha256(value.encode()).hexdigest()
        for name, value in (("marker", MARKER), ("secret", secret))
    }
    code = (
        "import glob, hashlib, socket\n"
        f"for target in {targets!r}:\n"
        "    try:\n"
        "        socket.create_connection(tuple(target), timeout=3).close()\n"
        "        print('NETWORK-OPEN')\n"
        "        break\n"
        "    except OSError:\n"
        "        pass\n"
        "else:\n"
        "    print('NETWORK-CLOSED')\n"
        f"wanted = {digests!r}\n"
        "seen = dict.fromkeys(wanted, 0)\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        entries = open(path, 'rb').read().split(b'\\0')\n"
        "    except OSError:\n"
        "        continue\n"
        "    for entry in entries:\n"
        "        digest = hashlib.sha256(entry.partition(b'=')[2]).hexdigest()\n"
        "        for name, want in wanted.items():\n"
        "            seen[name] += digest == want\n"
        "for name, count in seen.items():\n"
        "    print(f'{name}-seen {count}')\n"
    )
    return (
        "ls; sha256sum data.csv README.md; "
        "python3 -c 'import statsmodels, pandas; print(\"stats-ok\")'; "
        "python3 -c 'import sklearn; print(\"sklearn-ok\")'; "
        f"python3 -c {shlex.quote(code)}"
    )


def honest_answers(task_ids: list[str], key) -> dict[str, tuple[str, dict[str, Any]]]:
    answers = {}
    for task_id in task_ids:
        task = generate_task(task_id, key)
        readme = task.public.files["README.md"].decode()
        dictionary = parse_readme(readme)
        fit = honest_fit(read_staged(task.public.files["data.csv"], dictionary), dictionary)
        answers[readme] = (task_id, reference_submission(fit, dictionary))
    return answers


def scripted_policy(answers: dict[str, tuple[str, dict[str, Any]]], command: str):
    def policy(messages: list[dict[str, Any]]) -> Reply:
        first = next(m["content"] for m in messages if m["role"] == "user")
        text = first if isinstance(first, str) else " ".join(p.get("text", "") for p in first)
        _task_id, answer = next(v for readme, v in answers.items() if readme in text)
        turn = assistant_turns(messages)
        if turn == 0:
            return Reply(tool="bash", arguments={"command": command})
        if turn == 1:
            return Reply(tool="submit_answer", arguments={"answer": INVALID})
        if turn == 2:
            return Reply(tool="submit_answer", arguments={"answer": answer})
        return Reply(text="done")

    return policy


def cli_score(task_id: str, submission: dict[str, Any], tmp: Path, env: dict[str, str]) -> dict:
    path = tmp / f"{task_id.replace(':', '_')}.json"
    path.write_text(json.dumps(submission))
    proc = subprocess.run(
        [sys.executable, "-m", "causal_gym.cli", "score", task_id, str(path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def check_episodes(run, answers, tmp: Path, score_env: dict[str, str], isolated: bool) -> list[str]:
    assert run.returncode == 0, run.stderr[-3000:]
    episodes = run.episodes
    assert len(episodes) == len(answers)
    by_id = {task_id: answer for task_id, answer in answers.values()}
    probes = []
    for episode in episodes:
        trace = episode["traces"][0]
        task_id = episode["task"]["data"]["id"]
        assert trace["ok"], trace["errors"]
        assert trace["stop_condition"] == "submitted"
        info = trace["info"]
        assert info["status"] == "submitted" and info["invalid_attempts"] == 1
        assert info["submission"] == by_id[task_id]  # JSON floats round-trip exactly
        expected = cli_score(task_id, info["submission"], tmp, score_env)
        assert trace["rewards"]["reward"]["score"] == pytest.approx(expected["reward"], rel=1e-12)
        assert trace["metrics"]["clipped_reward"] == pytest.approx(expected["clipped_reward"])
        assert trace["metrics"]["covered"] == float(expected["covered"])
        # 1 where the anchor is the reference's own width (the multi-estimand
        # families); a little above it where the anchor is the optimal OLS's (the seed
        # families' linear tiers); the expert tier measures against its bound.
        assert trace["metrics"]["width_ratio"] == pytest.approx(expected["width_ratio"])
        assert trace["metrics"]["reward_version"] == expected["reward_version"]
        if task_id.startswith("eval-v2:"):
            assert expected["width_ratio"] == pytest.approx(1.0)
        elif not task_id.startswith("eval-expert-v1:"):
            assert 0.95 < expected["width_ratio"] < 1.3
        assert trace["metrics"]["invalid_attempts"] == 1.0
        assert "state" not in trace
    for request in run.requests:
        assert request["body"]["stream"] is True
    for request in run.requests:
        outputs = tool_outputs(request["body"]["messages"])
        if len(outputs) >= 2:
            probe, rejection = outputs[0], outputs[1]
            assert "ci_lower (2.0) must be <= ci_upper (1.0)" in rejection
            assert "not scored" in rejection
            probes.append(probe)
    assert len(probes) == len(answers)
    for seen in probes:
        listing = seen.split("\n")
        assert listing[0:2] == ["README.md", "data.csv"]
        assert "stats-ok" in seen
        marker = int(re.findall(r"^marker-seen (\d+)$", seen, re.M)[0])
        secret = int(re.findall(r"^secret-seen (\d+)$", seen, re.M)[0])
        if isolated:
            assert "sklearn-ok" in seen  # the pinned toolchain is in the container
            assert "NETWORK-CLOSED" in seen
            assert marker == 0 and secret == 0, "the host environment reached the agent"
        else:  # the subprocess runtime shares the host: the probe sees it, as it must
            assert "NETWORK-OPEN" in seen
            assert marker >= 1
    return probes


@pytest.mark.parametrize("split", ["train", "eval-v1", "eval-expert-v1"])
def test_subprocess_runtime_end_to_end(tmp_path: Path, split: str) -> None:
    key = resolve_key(environ={})
    ids = (
        ["train:ate:0", "train:adjustment:0"]
        if split == "train"
        else [f"{split}:ate:0", f"{split}:ate:1"]
    )
    answers = honest_answers(ids, key)
    with HostListener() as listener:
        run = run_vf_eval(
            scripted_policy(answers, probe("not-a-secret", listener.targets())),
            tmp_path / "out",
            ["-n", "2", "--env.agent.runtime.type", "subprocess", "--env.taskset.split", split],
            env={"CAUSAL_GYM_PROBE_MARKER": MARKER},
        )
    probes = check_episodes(run, answers, tmp_path, {}, isolated=False)
    if split != "train":
        manifest = {e.task_id: e.sha256 for e in load_manifest(split).tasks}
        assert set(ids) <= set(manifest)
        hashes = {h for p in probes for h in re.findall(r"^([0-9a-f]{64})  ", p, re.M)}
        wanted = {manifest[tid]["data.csv"] for tid in ids} | {
            manifest[tid]["README.md"] for tid in ids
        }
        assert hashes == wanted


def test_secret_key_refuses_the_subprocess_runtime(tmp_path: Path) -> None:
    run = run_vf_eval(
        lambda m: Reply(text="unused"),
        tmp_path / "out",
        ["-n", "1", "--env.agent.runtime.type", "subprocess"],
        env={"CAUSAL_GYM_KEY": "9a" * 32},
    )
    assert run.returncode != 0
    assert "subprocess runtime cannot hide it" in run.stderr
    assert run.requests == [] and run.episodes == []
    assert "9a" * 32 not in run.stderr + run.stdout


def test_bad_key_fails_before_any_episode(tmp_path: Path) -> None:
    run = run_vf_eval(
        lambda m: Reply(text="unused"),
        tmp_path / "out",
        ["-n", "1", "--env.agent.runtime.type", "docker"],
        env={"CAUSAL_GYM_KEY": "not-a-hex-key"},
    )
    assert run.returncode != 0 and "not valid hex" in run.stderr
    assert run.requests == [] and run.episodes == []


@pytest.mark.docker
def test_docker_runtime_end_to_end_with_a_secret_key(tmp_path: Path) -> None:
    image = require_docker()
    secret_hex = "c3" * 32
    key = parse_key_hex(secret_hex, "test")
    answers = honest_answers(["eval-v1:adjustment:5", "eval-v1:null_detect:7"], key)
    with HostListener() as listener:
        targets = [t for t in listener.targets() if t[0] != "127.0.0.1"]  # the host, from a box
        run = run_vf_eval(
            scripted_policy(answers, probe(secret_hex, targets)),
            tmp_path / "out",
            [
                "-n",
                "2",
                "--env.agent.runtime.type",
                "docker",
                "--env.agent.runtime.image",
                image,
                "--env.taskset.split",
                "eval-v1",
                "--select.include.ids",
                '["eval-v1:adjustment:5", "eval-v1:null_detect:7"]',
                "--env.taskset.task.env-key",
                "MY_EVAL_KEY",
            ],
            env={"MY_EVAL_KEY": secret_hex, "CAUSAL_GYM_PROBE_MARKER": MARKER},
        )
        assert listener.settled() == 0
    check_episodes(run, answers, tmp_path, {"CAUSAL_GYM_KEY": secret_hex}, isolated=True)
    for episode in run.episodes:
        assert episode["traces"][0]["agent"]["runtime"]["allow"] == []
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert secret_hex not in path.read_text(errors="replace"), path
    leftovers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", "name=vf-"], capture_output=True, text=True, check=True
    )
    assert leftovers.stdout.strip() == ""
