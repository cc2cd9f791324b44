"""The OpenEnv server (`causal-gym-run stream openenv`) on a real stream, driven by
OpenEnv's own client over its WebSocket from the OpenEnv virtualenv: an episode's
reward is the scorer's under the stream's exported key; without the consumer token,
or with another, nothing opens; sessions are capped and each one's sandbox is removed
when its client leaves or goes quiet; a malformed action is
OpenEnv's VALIDATION_ERROR (422 over HTTP); nothing on the wire or in the logs carries the
key, the token or a task id."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from causal_gym import generate_task
from causal_gym.contracts.families import contract_of
from causal_gym.reference.analyst import fit_reference, parse_readme, read_staged
from causal_gym.reference.answer import files_answer
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scoring.answer import episode_score
from orchestrator.integrations.analyst_tools import render_readme
from orchestrator.sandbox.scratch import owner_of, sandboxes_dir
from orchestrator.stream.supply import stream_ids
from tests.support.streams import RUN, Stream, start_stream

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("ray")]

REPO = Path(__file__).resolve().parent.parent
OPENENV_PYTHON = REPO / ".venv-openenv" / "bin" / "python"
CLIENT = REPO / "tests" / "support" / "openenv_client.py"
IDLE_S = 2.0


@dataclass
class Served:
    stream: Stream
    token_file: Path
    key_file: Path
    url: str
    pid: int
    log: Path

    def client(self, scenario: str, *args: str, token_file: str | None = None) -> Any:
        ws = self.url.replace("http://", "ws://")
        done = subprocess.run(
            [str(OPENENV_PYTHON), str(CLIENT), scenario, ws, token_file or str(self.token_file),
             *args],
            capture_output=True, text=True, timeout=300, cwd=REPO,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    def sandboxes(self) -> list[str]:
        """The sandboxes the server's process holds now."""
        mine = f"{self.pid}."
        return [
            p.name for p in sandboxes_dir().iterdir() if f"{owner_of(p.name)}.".startswith(mine)
        ]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not OPENENV_PYTHON.exists():
        pytest.fail("no .venv-openenv: run `bash scripts/setup_protocols.sh`")
    folder = tmp_path_factory.mktemp("openenv")
    stream = start_stream("openenv", folder / "state", "--families", "ate", "--workers", "1")
    log = folder / "server.log"
    server = None
    try:
        token_file = folder / "trainer.token"
        token_file.write_text(stream.mint("openenv-trainer") + "\n")
        key_file = folder / "stream.key"
        assert stream.cli("export-key", "--to", str(key_file)).returncode == 0
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [RUN, "stream", "openenv", "--url", stream.url, "--token-file", str(token_file),
                 "--port", "0", "--max-sessions", "2", "--idle-timeout", str(IDLE_S)],
                stdout=subprocess.PIPE, stderr=sink, start_new_session=True,
            )  # fmt: skip
        assert server.stdout is not None
        ready = json.loads(server.stdout.readline())
        yield Served(stream, token_file, key_file, ready["url"], server.pid, log)
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        stream.stop()


def wait_until(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return bool(predicate())


def test_an_episode_over_the_websocket_is_scored_by_the_stream(served: Served) -> None:
    seen = served.client("episode", *contract_of("ate").reference_kit)
    reset = seen["reset"]["observation"]
    assert reset["family"] == "ate" and "README.md" in reset["prompt"]
    assert reset["readme"] and reset["readme"] in reset["prompt"]
    assert [t["function"]["name"] for t in reset["tools"]] == ["bash", "python", "submit_answer"]
    assert "data.csv" in seen["bash"]["observation"]["output"]
    assert "kit" in seen["python"]["observation"]["output"]
    rejected = seen["rejected"]
    assert not rejected["done"] and rejected["reward"] is None
    assert "Submission rejected" in rejected["observation"]["output"]
    valid = seen["valid"]
    score = valid["observation"]["score"]
    assert valid["done"] and score["valid"] and valid["reward"] == score["clipped_reward"]
    assert "no episode in progress" in seen["after"]["observation"]["output"]
    assert seen["state"]["tool_calls"] == 5 and seen["state"]["invalid_attempts"] == 1
    # the reward is the scorer's own under the stream's key (the task found by its data)
    key = parse_key_hex(served.key_file.read_text(), "export")
    readme = reset["readme"]
    for task_id in itertools.islice(stream_ids(("ate",), 0, 1), 8):
        task = generate_task(task_id, key)
        if task.public.files["README.md"].decode() == readme:
            # the kit ran in the session's sandbox answers as the host's reference does
            assert seen["answer"] == files_answer(dict(task.public.files))
            expected = episode_score(task, seen["answer"])
            assert score["reward"] == pytest.approx(expected.reward, rel=1e-12)
            assert valid["reward"] == pytest.approx(expected.clipped_reward, rel=1e-12)
            break
    else:
        pytest.fail("the episode's task is not among the stream's first tasks")
    assert wait_until(lambda: not served.sandboxes(), 10), served.sandboxes()
    # nothing sent or logged carries the key, the token or a task id
    wire = json.dumps(seen)
    logged = served.log.read_text(errors="replace")
    token = served.token_file.read_text().strip()
    key_hex = served.key_file.read_text().strip()
    for secret in (key_hex, key_hex.upper(), token, served.stream.key_fingerprint):
        assert secret not in wire and secret not in logged
    assert not re.search(r"\btrain:ate:\d+", wire + logged)


def test_an_analyst_episode_is_asked_for_at_reset_and_scored_by_the_stream(
    served: Served,
) -> None:
    seen = served.client("analyst")
    reset = seen["reset"]["observation"]
    assert [t["function"]["name"] for t in reset["tools"]] == ["fit", "report"]
    assert reset["prompt"].startswith("Task (ate):") and "Call fit" in reset["system_prompt"]
    unknown = seen["unknown"]
    assert (
        not unknown["done"]
        and "unknown column 'no_such_column'" in unknown["observation"]["output"]
    )
    assert seen["fit"]["observation"]["output"].startswith("estimate ")
    report = seen["report"]
    score = report["observation"]["score"]
    assert report["done"] and score["valid"] and report["reward"] == score["clipped_reward"]
    key = parse_key_hex(served.key_file.read_text(), "export")
    for task_id in itertools.islice(stream_ids(("ate",), 0, 1), 12):
        task = generate_task(task_id, key)
        d = parse_readme(task.public.files["README.md"].decode())
        if reset["prompt"] != render_readme(task.public.files["README.md"].decode()):
            continue
        fit = fit_reference(read_staged(task.public.files["data.csv"], d), d)
        answer = {"estimate": fit.estimate, "ci_lower": fit.ci_lower, "ci_upper": fit.ci_upper}
        expected = episode_score(task, answer)
        assert report["reward"] == pytest.approx(expected.clipped_reward, rel=1e-9)
        break
    else:
        pytest.fail("the episode's task is not among the stream's first tasks")
    assert wait_until(lambda: not served.sandboxes(), 10), served.sandboxes()


def test_no_token_or_another_gets_nothing(served: Served, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.token"
    wrong.write_text(served.stream.mint("someone-else") + "\n")
    for token_file in ("-", str(wrong)):
        out = served.client("refused", token_file=token_file)
        assert not out["opened"] and "403" in out["error"], out
    token = served.token_file.read_text().strip()
    with httpx.Client(base_url=served.url, timeout=30) as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}):
            for method, path in (("GET", "/schema"), ("GET", "/metadata"), ("GET", "/state"),
                                 ("POST", "/reset"), ("GET", "/docs")):  # fmt: skip
                answer = http.request(method, path, headers=headers, json={})
                assert answer.status_code == 401, (method, path, answer.text)
                assert "Bearer" in answer.json()["error"]
        assert http.get("/health").status_code == 200
        bearer = {"Authorization": f"Bearer {token}"}
        assert http.get("/schema", headers=bearer).status_code == 200
        stateless = http.post("/reset", headers=bearer, json={})
        assert stateless.status_code == 409 and "/ws" in stateless.json()["error"]
        # OpenEnv's own /step: its 422 for a malformed action; a good one finds no episode
        bad = http.post("/step", headers=bearer, json={"action": {"tool": "rm"}})
        assert bad.status_code == 422 and "tool" in bad.text, bad.text
        lone = http.post("/step", headers=bearer, json={"action": {"tool": "bash"}})
        assert lone.status_code == 200 and "/ws" in lone.json()["observation"]["output"]
    assert not served.sandboxes()


def test_a_malformed_action_is_a_validation_error_and_the_session_goes_on(
    served: Served,
) -> None:
    seen = served.client("malformed")
    for name in ("unknown_tool", "extra_field"):
        assert "VALIDATION_ERROR" in seen[name], seen
    assert seen["after"]["output"].strip().endswith("ok"), seen
    assert wait_until(lambda: not served.sandboxes(), 10), served.sandboxes()


def test_sessions_are_capped_and_a_quiet_one_is_closed(served: Served) -> None:
    crowd = served.client("crowd", "3")["outcomes"]
    assert crowd[:2] == ["opened", "opened"] and "CAPACITY_REACHED" in crowd[2], crowd
    assert crowd[3] == "opened", crowd  # the first one's slot came back when it left
    assert wait_until(lambda: not served.sandboxes(), 10), served.sandboxes()
    quiet = subprocess.Popen(
        [str(OPENENV_PYTHON), str(CLIENT), "idle", served.url.replace("http://", "ws://"),
         str(served.token_file), str(IDLE_S + 8)],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert quiet.stdout is not None and json.loads(quiet.stdout.readline())["reset"]
    assert len(served.sandboxes()) == 1
    assert wait_until(lambda: not served.sandboxes(), IDLE_S + 7), "the quiet one kept its sandbox"
    after = json.loads(quiet.communicate(timeout=60)[0].strip().splitlines()[-1])["after_idle"]
    # the reaped session runs nothing: its episode (and sandbox) are gone
    assert isinstance(after, str) or "no episode in progress" in after["output"], after
