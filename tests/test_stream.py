"""Trainer streams over HTTP: real services (`causal-gym-run stream start`, uvicorn on
127.0.0.1, an embedded Ray each), real clients. Task mode, episode mode against a
scripted chat-completions server, limits, bad requests, a hostile consumer's attacks,
where the key is (only in the supply workers), and a client without Ray."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import resource
import selectors
import signal
import socket
import ssl
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from causal_gym.make import generate_task
from causal_gym.reference.probes import Staged, honest
from causal_gym.rng_keys import parse_key_hex
from orchestrator.stream import StreamError
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ServerScript, scripted_logprobs
from tests.support.streams import Stream, start_stream

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.xdist_group("ray")]
REPO = Path(__file__).resolve().parents[1]
ANSWER = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}


@pytest.fixture(scope="module")
def streams(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Stream]]:
    base = tmp_path_factory.mktemp("streams")
    started: dict[str, Stream] = {}
    try:
        # beta's handles expire after 20 s, for the expiry test; alpha keeps the
        # default, so work that holds handles while it computes (the demo trainer
        # scores a batch of 16 one after another) does not race the clock on a busy
        # machine (it once lost a handle that way, 20 s after delivery)
        for name, ttl in (("alpha", "3600"), ("beta", "20")):
            started[name] = start_stream(
                name, base / name, "--workers", "2", "--handle-ttl", ttl,
                "--concurrency", "2", "--episodes-per-actor", "2",
            )  # fmt: skip
        yield started
    finally:
        for stream in started.values():
            stream.stop()


@pytest.fixture(scope="module")
def tokens(streams: dict[str, Stream]) -> dict[str, str]:
    return {
        f"{name}/{consumer}": stream.mint(consumer)
        for name, stream in streams.items()
        for consumer in ("one", "two")
    }


def honest_answer(task: Any) -> dict[str, Any]:
    return honest(Staged.parse(task.files["data.csv"], task.files["README.md"].decode()))


def answer_for(task: Any) -> dict[str, Any]:
    answer = dict(ANSWER)
    if task.family.value == "adjustment":
        answer["adjustment_set"] = []
    if task.family.value == "null_detect":
        answer["effect_probability"] = 0.65
    return answer


def test_two_streams_and_two_consumers_never_get_the_same_task(
    streams: dict[str, Stream], tokens: dict[str, str]
) -> None:
    seen: list[set[str]] = []
    for key, token in tokens.items():
        stream = streams[key.split("/")[0]]
        with stream.client(token) as client:
            tasks = client.pull_tasks(12)
            seen.append({hashlib.sha256(t.files["data.csv"]).hexdigest() for t in tasks})
            for task in tasks:
                client.score(task.handle, answer_for(task))
    assert all(len(s) == 12 for s in seen)
    union = set().union(*seen)
    assert len(union) == 48  # disjoint across consumers and across streams
    fingerprints = {s.operator().status().key_fingerprint for s in streams.values()}
    assert len(fingerprints) == 2


def test_task_mode_round_trips_like_causal_gym_score(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    key_file = tmp_path / "alpha.key"
    exported = streams["alpha"].cli("export-key", "--to", str(key_file))
    assert exported.returncode == 0, exported.stderr
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    key = parse_key_hex(key_file.read_text(), "export")
    with streams["alpha"].client(tokens["alpha/one"]) as client:
        answered = [(t, honest_answer(t)) for t in client.pull_tasks(3)]
        scored = [(t, a, client.score(t.handle, a)) for t, a in answered]
    by_hash = {}
    for index in range(40):
        for family in ("ate", "adjustment", "null_detect"):
            task_id = f"train:{family}:{index}"
            by_hash[generate_task(task_id, key).public.sha256("data.csv")] = task_id
    for task, answer, score in scored:
        task_id = by_hash[hashlib.sha256(task.files["data.csv"]).hexdigest()]
        path = tmp_path / "answer.json"
        path.write_text(json.dumps(answer))
        reference = subprocess.run(
            [str(Path(sys.executable).with_name("causal-gym")), "score", task_id, str(path),
             "--key-file", str(key_file)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert reference.returncode == 0, reference.stderr
        assert score.valid and score.reward == pytest.approx(
            json.loads(reference.stdout)["reward"], rel=1e-12
        )


def test_handles_are_single_use_per_consumer_and_expire(
    streams: dict[str, Stream], tokens: dict[str, str]
) -> None:
    beta = streams["beta"]
    one, two = beta.client(tokens["beta/one"]), beta.client(tokens["beta/two"])
    start = one.me()
    [task] = one.pull_tasks(1)
    with pytest.raises(StreamError, match="unknown handle") as caught:
        two.score(task.handle, answer_for(task))  # another consumer's handle
    assert caught.value.code == "not_found"
    assert one.score(task.handle, answer_for(task)).valid  # still the holder's to score
    for bad in (task.handle, "never-issued-handle"):
        with pytest.raises(StreamError, match="unknown handle"):
            one.score(bad, answer_for(task))
    [late] = one.pull_tasks(1)
    time.sleep(21)  # --handle-ttl 20, counted from delivery
    with pytest.raises(StreamError, match="expired"):
        one.score(late.handle, answer_for(late))
    with pytest.raises(StreamError, match="less than or equal to 1024"):
        one.pull_tasks(5000)
    [invalid] = one.pull_tasks(1)
    result = one.score(invalid.handle, {"estimate": 1.0})
    assert not result.valid and result.reward == -1.0 and result.errors
    me = one.me()
    assert (
        me.tasks_delivered - start.tasks_delivered,
        me.tasks_scored - start.tasks_scored,
        me.handles_expired - start.handles_expired,
    ) == (3, 2, 1)


def test_a_group_pull_hands_one_task_out_under_several_single_use_handles(
    streams: dict[str, Stream], tokens: dict[str, str]
) -> None:
    alpha = streams["alpha"]
    with alpha.client(tokens["alpha/two"]) as client:
        start = client.me()
        groups = client.pull_groups(2, 4)
        assert [len(g.handles) for g in groups] == [4, 4]
        handles = [h for g in groups for h in g.handles]
        assert len(set(handles)) == 8 and all(g.task.handle == g.handles[0] for g in groups)
        assert groups[0].task.files["data.csv"] != groups[1].task.files["data.csv"]
        held = client.me()
        assert held.handles_outstanding - start.handles_outstanding == 8
        assert held.tasks_delivered - start.tasks_delivered == 2
        group = groups[0]
        honest = honest_answer(group.task)
        scores = [client.score(group.handles[0], honest)]
        scores += [client.score(h, answer_for(group.task)) for h in group.handles[1:]]
        assert all(s.valid for s in scores)
        assert len({s.reward for s in scores[1:]}) == 1  # the same answer, the same truth
        assert scores[0].reward > scores[1].reward  # the honest answer beats the crude one
        for used in group.handles:
            with pytest.raises(StreamError, match="unknown handle"):
                client.score(used, honest)
        for handle in groups[1].handles:
            assert client.score(handle, answer_for(groups[1].task)).valid
        with pytest.raises(StreamError, match="at most 1024 handles: n x group") as caught:
            client.pull_groups(300, 4)
        assert caught.value.code == "bad_request"
        with pytest.raises(StreamError, match="less than or equal to 64"):
            client.pull_groups(1, 65)
        assert client.me().handles_outstanding == start.handles_outstanding


def _scan(stream: Stream, secrets: list[bytes], replies: list[bytes]) -> None:
    blob = b"\n".join(replies) + stream.log().encode()
    for secret in secrets:
        assert secret not in blob, secret[:20]


def test_a_hostile_consumer_gets_tasks_and_rewards_and_nothing_else(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    alpha = streams["alpha"]
    token = tokens["alpha/two"]
    bearer = {"Authorization": f"Bearer {token}"}
    replies: list[bytes] = []
    before = alpha.operator().status()

    def send(method: str, path: str, headers: Any = None, url: str = alpha.url, **kw: Any) -> Any:
        reply = httpx.request(method, url + path, headers=headers or bearer, timeout=60, **kw)
        replies.append(reply.content)
        return reply

    sink = tmp_path / "sink.key"
    attacks = [
        ("GET", "/v1/operator/status", {}),
        ("POST", "/v1/operator/stop", {}),
        ("POST", "/v1/operator/export-key", {"json": {"path": str(sink)}}),
        ("POST", "/v1/operator/export-key", {"json": {"path": "stolen.key"}}),
        ("POST", "/v1/operator/tokens", {"json": {"name": "mine"}}),
        ("DELETE", "/v1/operator/tokens/one", {}),
        ("POST", "/v1/operator/episodes", {"json": {"endpoint": {
            "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "HOME"}}}),
    ]  # fmt: skip
    for method, path, kw in attacks:
        # on the consumers' listener the operator's routes are not there at all; on the
        # operator's (loopback) listener a consumer token is the wrong role
        reply = send(method, path, **kw)
        assert reply.status_code == 404, (path, reply.text)
        assert reply.json()["error"]["code"] == "not_found"
        reply = send(method, path, url=alpha.operator_url, **kw)
        assert reply.status_code == 403, (path, reply.text)
        assert reply.json()["error"]["code"] == "forbidden"
    assert not sink.exists() and not (REPO / "stolen.key").exists()
    # not even the operator can point episode mode at a variable of the head's
    with pytest.raises(StreamError, match="api_key_env: Extra inputs are not permitted"):
        alpha.operator().configure(
            {"endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "HOME"}}
        )
    for headers in ({}, {"Authorization": "Bearer cgs_c_wrong"}, {"Authorization": token}):
        reply = send("POST", "/v1/tasks/pull", headers=headers or {"X": "1"}, json={"n": 5})
        assert reply.status_code == 401 and reply.json()["error"]["code"] == "unauthorized"
    bad = [
        (send("POST", "/v1/tasks/score", content=b"{not json"), 400),
        (send("POST", "/v1/tasks/score", json={"handle": "h" * 20, "submission": "x" * 300_000}),
         413),
        (send("POST", "/v1/tasks/pull", json={"n": 0}), 400),
        (send("POST", "/v1/tasks/pull", json={"n": 3, "extra": 1}), 400),
        (send("POST", "/v1/episodes/pull", json={"n": 1}), 400),
        (send("GET", "/v1/tasks/everything"), 404),
        (send("POST", "/v1/tasks/pull", json={"n": "1"}), 400),
        (send("POST", "/v1/tasks/pull", json={"n": True}), 400),
        (send("POST", "/v1/tasks/pull", json={"n": 1, "group": 2.0}), 400),
        (send("POST", "/v1/tasks/pull", json={"n": 1}, headers=[
            ("Authorization", f"Bearer {token}"), ("Authorization", f"Bearer {token}")]), 400),
    ]  # fmt: skip
    for reply, status in bad:
        assert reply.status_code == status, reply.text
        assert reply.json()["error"]["message"].count("\n") == 0
    after = alpha.operator().status()
    assert after.tasks_delivered == before.tasks_delivered  # the attacks cost nothing
    # and what it may do works, then nothing it received carries a secret
    with alpha.client(token) as client:
        tasks = client.pull_tasks(4)
        scores = [client.score(t.handle, answer_for(t)) for t in tasks]
    replies += [s.model_dump_json().encode() for s in scores]
    replies += [t.model_dump_json().encode() for t in tasks]
    key_file = tmp_path / "alpha.key"
    assert alpha.cli("export-key", "--to", str(key_file)).returncode == 0
    key_hex = key_file.read_text().strip()
    key = parse_key_hex(key_hex, "export")
    truths: list[bytes] = []
    for index in range(30):
        for family in ("ate", "adjustment", "null_detect"):
            task = generate_task(f"train:{family}:{index}", key)
            pulled = {hashlib.sha256(t.files["data.csv"]).hexdigest() for t in tasks}
            if task.public.sha256("data.csv") in pulled:
                truths.append(repr(task.hidden.ate).encode())
    assert len(truths) == 4
    telling = [t for t in truths if len(t) > 8]  # a structural null's 0.0 is everywhere
    assert telling
    _scan(alpha, [key_hex.encode(), *telling, token.encode()], replies)


def test_revoked_tokens_are_refused_and_cost_nothing(streams: dict[str, Stream]) -> None:
    beta = streams["beta"]
    token = beta.mint("short-lived")
    with beta.client(token) as client:
        assert len(client.pull_tasks(2)) == 2
        assert beta.cli("token revoke", "short-lived").returncode == 0
        with pytest.raises(StreamError, match="valid token") as caught:
            client.pull_tasks(1)
        assert caught.value.code == "unauthorized"
    assert "short-lived" in {c.name for c in beta.operator().status().consumers}


def replay(messages: list[dict[str, Any]]) -> Reply:
    """A policy served by the trainer: answers at once, in its task's answer type."""
    readme = next(str(m["content"]) for m in messages if m.get("role") == "user")
    family = re.search(r"Answer type: `(\w+)`", readme)
    answer: dict[str, Any] = dict(ANSWER)
    if family and family.group(1) == "adjustment":
        answer["adjustment_set"] = []
    if family and family.group(1) == "null_detect":
        answer["effect_probability"] = 0.65
    return Reply(tool="submit_answer", arguments=answer)


def test_episode_mode_buffers_within_the_bound_and_passes_logprobs_unchanged(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    alpha = streams["alpha"]
    # the endpoint's key: a file of the stream's endpoint-secrets folder (by default its
    # state folder), named by its bare name
    (alpha.state_dir / "model.key").write_text("sk-model-server-key\n")
    with ScriptedOpenAIServer(ServerScript(replay)) as server:
        settings = {
            "endpoint": {"base_url": server.base_url, "model": "scripted", "logprobs": True,
                         "top_logprobs": 0, "api_key_file": "model.key"},
            "batch_size": 2, "buffer_factor": 2.0, "policy_version": 1,
        }  # fmt: skip
        config = tmp_path / "episodes.json"
        config.write_text(json.dumps(settings))
        configured = alpha.cli("episodes", "--config", str(config))
        assert configured.returncode == 0 and json.loads(configured.stdout)["bound"] == 4
        operator = alpha.operator()
        peak = 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # a consumer that does not pull
            stats = operator.status()
            peak = max(peak, stats.episodes_running + stats.episodes_buffered)
            time.sleep(0.2)
        assert stats.episodes_buffered >= 1 and peak <= 4
        with alpha.client(tokens["alpha/one"]) as client:
            with pytest.raises(StreamError, match="at most 4"):
                client.pull_episodes(10)
            # a consumer cannot move the version every consumer's rollouts carry
            reply = httpx.post(
                alpha.url + "/v1/episodes/policy-version", json={"version": 7}, timeout=30,
                headers={"Authorization": f"Bearer {tokens['alpha/one']}"},
            )  # fmt: skip
            assert reply.status_code == 403 and "operator" in reply.json()["error"]["message"]
            assert operator.status().policy_version == 1
            moved = alpha.cli("policy-version", "2")  # the operator's, after a weight push
            assert moved.returncode == 0 and json.loads(moved.stdout)["policy_version"] == 2
            stale_before = operator.status().episodes_stale
            fresh = client.pull_episodes(4, min_policy_version=2, timeout_s=60)
        assert fresh and all(r.policy_version == 2 for r in fresh)
        assert operator.status().episodes_stale > stale_before  # version-1 rollouts counted
        rollout = fresh[0]
        assert rollout.status == "submitted" and rollout.components["width_ratio"] is not None
        assert rollout.messages[0]["role"] == "system"
        choice = rollout.completions[0]["choices"][0]
        assert choice["logprobs"]["content"] == scripted_logprobs(1)  # unchanged, as sent
        assert choice["token_ids"] == [7, 8, 9, 10, 11]
        assert server.chat_requests[0]["body"]["logprobs"] is True
        assert server.chat_requests[0]["auth"] == "Bearer sk-model-server-key"
        assert "sk-model-server-key" not in operator.status().model_dump_json()
        assert "sk-model-server-key" not in alpha.log()


def test_an_endpoint_that_stops_answering_becomes_statuses(
    streams: dict[str, Stream], tokens: dict[str, str]
) -> None:
    beta = streams["beta"]
    beta.operator().configure(
        {"endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}, "batch_size": 2}
    )
    with beta.client(tokens["beta/two"]) as client:
        rollouts = client.pull_episodes(2, timeout_s=120)
        assert rollouts and all(r.status == "model_error" and r.reward == -1.0 for r in rollouts)
        # Refused connections are transient: each rollout ran 1 + 2 times, with the
        # client's backoffs longer than beta's 20 s handle TTL: episode mode's handles
        # are held until scored, never expired under a running rollout.
        assert all(r.attempts == 3 and r.model_retries > 0 for r in rollouts)
        assert client.pull_tasks(1)  # task mode unaffected


def _processes(marker: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def memory_holds(pid: int, needles: tuple[bytes, ...]) -> bool:
    """Whether any readable mapping of the process contains one of the needles."""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            addresses, perms = line.split()[:2]
            if "r" not in perms:
                continue
            start, end = (int(a, 16) for a in addresses.split("-"))
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            if any(needle in chunk for needle in needles):
                return True
    return False


CONSUMER = """
import sys
from orchestrator.stream import StreamClient
client = StreamClient(sys.argv[1], sys.argv[2])
for task in client.pull_tasks(int(sys.argv[3])):
    client.score(task.handle, {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0})
print("scored", flush=True)
sys.stdin.read()
"""


def test_the_key_is_only_in_the_supply_workers(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    beta = streams["beta"]
    key_file = tmp_path / "beta.key"
    assert beta.cli("export-key", "--to", str(key_file)).returncode == 0
    secret = key_file.read_text().strip()
    needles = (secret.encode(), bytes.fromhex(secret))
    consumer = subprocess.Popen(
        [sys.executable, "-c", CONSUMER, beta.url, tokens["beta/one"], "3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    try:
        assert consumer.stdout is not None and consumer.stdout.readline().strip() == "scored"
        assert not memory_holds(consumer.pid, needles)
        assert not memory_holds(beta.pid, needles)  # the service that answers requests
        supplies = [p for p in _processes(b"ray::TaskSupply") if memory_holds(p, needles)]
        assert supplies, "the scan found the key nowhere: it would find nothing anywhere"
    finally:
        consumer.kill()
        consumer.wait()


VANISHES = """
import sys
from orchestrator.stream import StreamClient
client = StreamClient(sys.argv[1], sys.argv[2])
for i, task in enumerate(client.iter_tasks(40)):
    print("got", i, flush=True)
    if i == 1:
        sys.stdin.read()
"""


def test_a_consumer_that_vanishes_mid_pull_costs_the_others_nothing(
    streams: dict[str, Stream], tokens: dict[str, str]
) -> None:
    beta = streams["beta"]  # 20 s handles: the victim's expire within the test
    victim_token = beta.mint("vanishes")
    victim = subprocess.Popen(
        [sys.executable, "-c", VANISHES, beta.url, victim_token],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
    )  # fmt: skip
    assert victim.stdout is not None
    assert [victim.stdout.readline().split()[0] for _ in range(2)] == ["got", "got"]
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    started = time.monotonic()
    with beta.client(tokens["beta/two"]) as other:
        tasks = other.pull_tasks(6)
        for task in tasks:
            other.score(task.handle, answer_for(task))
    assert len(tasks) == 6 and time.monotonic() - started < 60
    time.sleep(21)  # the victim's handles expire, its undelivered tasks served others
    view = next(c for c in beta.operator().status().consumers if c.name == "vanishes")
    assert view.handles_outstanding == 0 and view.tasks_delivered < 40
    assert view.handles_expired == view.tasks_delivered


def test_the_async_client_round_trips(streams: dict[str, Stream], tokens: dict[str, str]) -> None:
    import asyncio

    from orchestrator.stream import AsyncStreamClient

    async def trainer_step() -> list[float]:
        async with AsyncStreamClient(streams["beta"].url, tokens["beta/two"]) as client:
            tasks = await client.pull_tasks(3)
            scores = await asyncio.gather(
                *(client.score(t.handle, honest_answer(t)) for t in tasks)
            )
        return [s.reward for s in scores if s.valid]

    rewards = asyncio.run(trainer_step())
    assert len(rewards) == 3 and all(-50 < r <= 1.0 for r in rewards)


CLIENT_ONLY = """
import importlib.util, sys
for heavy in ("ray", "numpy", "pandas", "scipy", "openai", "fastapi"):
    assert importlib.util.find_spec(heavy) is None, heavy
from orchestrator.stream.client import StreamClient
client = StreamClient(sys.argv[1], sys.argv[2])
tasks = client.pull_tasks(2)
scores = [client.score(t.handle, {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0,
                                  "adjustment_set": [], "effect_probability": 0.5}) for t in tasks]
print(len(tasks), len(scores), sorted(m for m in sys.modules if m.split(".")[0] in
      ("ray", "numpy", "pandas")))
"""


def test_a_client_without_ray_pulls_and_scores(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    """The `client` extra's way: the package without its dependencies, then httpx and
    pydantic, in a virtualenv of its own."""
    venv = tmp_path / "client-venv"
    uv = str(Path(sys.executable).with_name("uv"))
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    install = [uv, "pip", "install", "-q", "--python", python]
    subprocess.run([*install, "--no-deps", str(REPO)], check=True, timeout=600)
    subprocess.run([*install, "httpx>=0.27", "pydantic>=2.7"], check=True, timeout=600)
    done = subprocess.run(
        [python, "-c", CLIENT_ONLY, streams["alpha"].url, tokens["alpha/one"]],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[:2] == ["2", "2"] and done.stdout.strip().endswith("[]")


def test_the_openapi_schema_is_versioned_and_committed(streams: dict[str, Stream]) -> None:
    served = httpx.get(streams["alpha"].url + "/openapi.json", timeout=30).json()
    # 1.1: group pulls; 1.2: reward_version; 1.3: episode retries; 1.4: node loss counts;
    # 1.5: a head shared with other users (types.py's API_VERSION says what changed)
    assert served["info"]["version"] == "1.5.0"
    assert all(path.startswith("/v1/") for path in served["paths"])
    committed = json.loads((REPO / "docs" / "stream-openapi-v1.json").read_text())
    assert served == committed, "the API changed: regenerate docs/stream-openapi-v1.json"


def test_the_demo_trainer_improves_its_reward(streams: dict[str, Stream], tmp_path: Path) -> None:
    alpha = streams["alpha"]
    proc = subprocess.run(
        [sys.executable, "scripts/demo_trainer.py", "--url", alpha.url,
         "--token", alpha.mint("demo"), "--steps", "12", "--batch", "16", "--eval-tasks", "32",
         "--start-width", "0.3", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads((tmp_path / "learning_curve.json").read_text())
    # The learned knobs against the starting ones on the same 32 fresh tasks: in 12
    # runs of this configuration on fresh keys (the stream's supply in one process) the
    # paired gain was +0.27 on average and 3.9 to 6.3 of its standard errors, so it is
    # <= 0 with probability under 1e-4; every last width was within 0.37 of the honest
    # 1.0, where 0.7 is allowed. (The old check, last 4 steps' reward against the first
    # 4 from unpaired perturbations, failed in CI and in 1 of 2 such runs here.)
    held_out = record["held_out"]
    assert held_out["tasks"] == 32
    assert held_out["gain"] > 0, held_out
    widths = [step["width_multiplier"] for step in record["steps"]]
    assert len(widths) == 12
    assert abs(widths[-1] - 1.0) < abs(record["start_width"] - 1.0)
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    assert re.search(r"width multiplier 0\.300 -> .*\(paired gain [+-]", proc.stdout)


def test_a_stream_serves_the_multi_estimand_and_design_families(tmp_path: Path) -> None:
    """Pulled tasks carry their estimand names (cate's levels, a design task's one)
    and every staged file; the reference answer scores through the stream, a level
    the task does not have is refused by name instead of scored, and so is another
    estimand of a design family than the one its task names."""
    from causal_gym.reference.answer import files_answer
    from causal_gym.scoring.answer import episode_score
    from causal_gym.task_id import TaskId

    # served over TLS (as on the KubeRay head), with a certificate made here
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
         "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    tls = ("--ssl-certfile", str(cert), "--ssl-keyfile", str(key))
    served = ("cate", "mediation", "obs_vs_rct", "iv", "did", "rdd")
    families = ("--families", ",".join(served))
    gamma = start_stream("gamma", tmp_path / "gamma", *families, "--workers", "1", *tls)
    assert gamma.url.startswith("https://") and gamma.operator_url.startswith("http://127.0.0.1:")
    trusted = ssl.create_default_context(cafile=str(cert))
    try:
        with gamma.client(gamma.mint("t"), verify=trusted) as client:
            first: dict[str, Any] = {}
            for task in client.pull_tasks(12):
                first.setdefault(task.family.value, task)
            assert sorted(first) == sorted(served)
            assert "trial.csv" in first["obs_vs_rct"].files and len(first["cate"].estimands) >= 3
            # the reward is the scorer's under the stream's key (not "positive": a 90%
            # interval misses one task in ten, so that check failed by chance)
            key_file = tmp_path / "gamma.key"
            assert gamma.cli("export-key", "--to", str(key_file)).returncode == 0
            stream_key = parse_key_hex(key_file.read_text(), "export")
            for family, task in first.items():
                answer = files_answer(dict(task.files))
                scored = client.score(task.handle, answer)
                same = next(
                    made
                    for i in range(12)
                    if (made := generate_task(TaskId.parse(f"train:{family}:{i}"), stream_key))
                    .public.files["README.md"] == task.files["README.md"]
                )  # fmt: skip
                expected = episode_score(same, answer)
                assert scored.valid and scored.reward == pytest.approx(expected.reward, rel=1e-12)
            cate = next(t for t in client.pull_tasks(6) if t.family.value == "cate")
            wrong = client.score(cate.handle, {"effects": {"no-such-level": ANSWER}})
            assert not wrong.valid and any("unknown levels" in e for e in wrong.errors)
            did = next(t for t in client.pull_tasks(6) if t.family.value == "did")
            late = {"estimand": "late", "estimate": 1.0, "ci_lower": 0.0, "ci_upper": 2.0}
            refused = client.score(did.handle, late)
            assert not refused.valid and len(refused.errors) == 1, refused
    finally:
        gamma.stop()
    assert not (tmp_path / "gamma" / "stream.json").exists()
    assert not (tmp_path / "gamma" / "operator.token").exists()
    # the audit log stays, and ends with who stopped the stream
    assert [r["event"] for r in gamma.audit()[-2:]] == ["stop", "stopped"]
    assert gamma.audit()[-2]["client"] == "127.0.0.1"


def test_bad_serve_options_are_one_line(tmp_path: Path) -> None:
    from tests.support.streams import stream_cli

    folder = tmp_path / "s"
    for args, fragment in (
        (["--families", "ate,nope"], "unknown families ['nope']"),
        (["--sandbox", "vm"], "unknown sandbox 'vm'"),
        (["--ssl-certfile", "/x"], "needs both"),
        (["--ssl-certfile", "/x", "--ssl-keyfile", "/y"], "cannot load the TLS certificate /x"),
        (["--host", "no such host"], "cannot resolve host 'no such host'"),
        (["--operator-host", "no such host"], "cannot resolve host 'no such host'"),
        (["--host", "0.0.0.0"], "--host 0.0.0.0 is not loopback"),
        (["--operator-host", "0.0.0.0"], "--operator-host 0.0.0.0 is not loopback"),
        (["--max-handles", "5", "--max-handles-per-consumer", "10"], "is above --max-handles 5"),
        (["--header-timeout", "0"], "--header-timeout is a number of seconds"),
        (["--endpoint-secrets", str(tmp_path / "none")], "endpoint-secrets folder"),
    ):
        done = stream_cli("serve", "bad", "--state-dir", str(folder), *args)
        assert done.returncode == 2 and fragment in done.stderr, done.stderr
        assert done.stderr.count("\n") == 1
        assert not folder.exists()  # nothing written, nothing left
    # plain HTTP off loopback when asked for: a warning line, and here a port in use
    with socket.create_server(("127.0.0.1", 0)) as taken:
        busy = str(taken.getsockname()[1])
        done = stream_cli("serve", "bad", "--state-dir", str(folder), "--host", "0.0.0.0",
                          "--port", "0", "--insecure-http", "--operator-port", busy)  # fmt: skip
    warning, error = done.stderr.splitlines()
    assert warning.startswith("warning: --host 0.0.0.0 serves plain HTTP (--insecure-http)")
    assert done.returncode == 2 and "Address already in use" in error and not folder.exists()
    # `start` runs `serve` in the background: the same line, and no folder left either
    done = stream_cli("start", "bad", "--state-dir", str(folder), "--host", "no such host")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "cannot resolve host" in done.stderr and not folder.exists()
    done = stream_cli("status", "nothing-here", "--state-dir", str(tmp_path / "none"))
    assert done.returncode == 2 and "no running stream" in done.stderr
    done = stream_cli("episodes", "nothing-here", "--config", "/dev/zero")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "is not a regular file" in done.stderr


# --- a head shared with other users (issue 34) -----------------------------------------
def test_episode_mode_sends_no_file_of_the_head_to_an_endpoint(
    streams: dict[str, Stream], tmp_path: Path
) -> None:
    """The attack: point api_key_file at the stream's exported key and at Ray's auth
    token (by path, through links in the allowed folder, as copies), with base_url a
    listener of ours. Each is refused with one line and the listener hears nothing."""
    alpha = streams["alpha"]
    exported = tmp_path / "exported.key"
    assert alpha.cli("export-key", "--to", str(exported)).returncode == 0
    ray_token = Path.home() / ".ray" / "auth_token"
    assert ray_token.is_file()  # the stream's Ray made it (token authentication)
    inside = alpha.state_dir  # the default endpoint-secrets folder
    planted = {"to-key": exported, "to-ray": ray_token}
    for name, target in planted.items():
        (inside / name).symlink_to(target)
    (inside / "copied-key").write_text(exported.read_text())
    (inside / "copied-ray").write_text(ray_token.read_text())
    os.link(exported, inside / "hard-key")
    names = [str(exported), str(ray_token), f"../{alpha.state_dir.name}/to-key", *planted,
             "copied-key", "copied-ray", "hard-key", "operator.token", "stream.json"]  # fmt: skip
    try:
        with ScriptedOpenAIServer(ServerScript(replay)) as listener:
            for name in names:
                settings = {"endpoint": {"base_url": listener.base_url, "model": "m",
                                         "api_key_file": name}}  # fmt: skip
                with pytest.raises(StreamError, match="api_key_file") as caught:
                    alpha.operator().configure(settings)
                assert caught.value.code == "bad_request" and "\n" not in str(caught.value)
                if name in (str(ray_token), "to-key", "copied-key"):  # the CLI's way too
                    config = tmp_path / "episodes.json"
                    config.write_text(json.dumps(settings))
                    done = alpha.cli("episodes", "--config", str(config))
                    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
            time.sleep(2)
            assert listener.script.requests == []
    finally:
        for name in (*planted, "copied-key", "copied-ray", "hard-key"):
            (inside / name).unlink(missing_ok=True)


def _connect(port: int, source: str, partial: bytes = b"GET /v1/health HTTP/1.1\r\n") -> Any:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(partial)
    return sock


def _wait_closed(socks: list[Any], seconds: float) -> list[Any]:
    """The sockets the server ended within `seconds` (the rest stay open)."""
    ended: list[Any] = []
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while len(ended) < len(socks) and (left := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(timeout=left):
                try:
                    data = key.fileobj.recv(4096)  # type: ignore[union-attr]
                except (ConnectionResetError, BlockingIOError):
                    data = b""
                if not data:
                    selector.unregister(key.fileobj)
                    ended.append(key.fileobj)
    return ended


def test_two_thousand_slow_clients_leave_the_stream_answering(streams: dict[str, Stream]) -> None:
    """The attack: connections that never finish their headers (2,000 from twenty
    loopback addresses, and 200 more from one) while someone else asks /v1/health.
    Health answers within a second throughout, the 72 past the per-address cap are
    closed at once, the rest at the header timeout, and the logs stay small."""
    alpha = streams["alpha"]
    port = int(alpha.url.rsplit(":", 1)[1])
    start = next(r for r in reversed(alpha.audit()) if r["event"] == "start")
    assert start["max_connections"] >= 2500, "the head's descriptor limit is too low"
    assert (start["max_connections_per_address"], start["header_timeout_s"]) == (128, 10.0)
    log, audit_lines = alpha.state_dir / "serve.log", len(alpha.audit())
    log_before = log.stat().st_size
    before = alpha.operator().status()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    slow: list[Any] = []
    flood: list[Any] = []
    try:
        began = time.monotonic()
        slow = [_connect(port, f"127.0.1.{i % 20 + 1}") for i in range(2000)]
        flood = [_connect(port, "127.0.2.1") for _ in range(200)]
        latencies = []
        for _ in range(4):
            asked = time.monotonic()
            assert httpx.get(alpha.url + "/v1/health", timeout=1).status_code == 200
            latencies.append(time.monotonic() - asked)
            time.sleep(0.25)
        refused = _wait_closed(flood, 1.0)
        assert _wait_closed(slow, 0.01) == []  # under every cap: none closed early
        held = alpha.operator().status()
        print(f"\nslow clients: opened in {time.monotonic() - began:.1f} s, health max "
              f"{max(latencies) * 1000:.0f} ms, open {held.connections_open}")  # fmt: skip
        assert len(refused) == 72 and held.connections_refused - before.connections_refused == 72
        assert held.connections_open >= 2128
        assert time.monotonic() - began < 10  # all of it before the first could time out
        rest = [s for s in slow + flood if s not in refused]
        ended = _wait_closed(rest, began + 10 + 20 - time.monotonic())
        print(f"closed by the header timeout: {len(ended)} of {len(rest)} after "
              f"{time.monotonic() - began:.1f} s")  # fmt: skip
        assert len(ended) == len(rest) == 2128
        assert time.monotonic() - began > 10 - 1
    finally:
        for sock in slow + flood:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    after = alpha.operator().status()
    assert after.connections_timed_out - before.connections_timed_out >= 2128
    grown = log.stat().st_size - log_before
    print(f"serve.log grew {grown} bytes; audit lines {len(alpha.audit()) - audit_lines}")
    assert grown < 1 << 20 and len(alpha.audit()) - audit_lines <= 2


def test_concurrent_pulls_never_pass_a_consumer_s_cap(streams: dict[str, Stream]) -> None:
    """The attack: eight pulls of 4 at once against a cap of 4 (it once left 32 handles
    with one consumer). One pull gets its 4, seven are refused, and the consumer's
    handles, checked after each one arrives, never pass 4."""
    alpha = streams["alpha"]
    token = alpha.mint("capped", "--max-handles", "4")

    async def attack() -> tuple[list[Any], list[str], int]:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=alpha.url, headers=headers, timeout=120) as http:
            handles: list[str] = []  # every handle received
            unscored: list[str] = []
            peak = 0

            async def pull(body: dict[str, int]) -> Any:
                nonlocal peak
                async with http.stream("POST", "/v1/tasks/pull", json=body) as reply:
                    if reply.status_code != 200:
                        await reply.aread()
                        return reply.json()["error"]["code"]
                    async for line in reply.aiter_lines():
                        if line.strip():
                            data = json.loads(line)
                            unscored.extend(data.get("handles") or [data["handle"]])
                            me = (await http.get("/v1/me")).json()
                            held = me["handles_outstanding"] + me["handles_reserved"]
                            peak = max(peak, held, len(unscored))
                            assert held <= 4 and len(unscored) <= 4, (me, unscored)
                    return "ok"

            results = list(await asyncio.gather(*(pull({"n": 4}) for _ in range(8))))
            for handle in unscored:
                await http.post("/v1/tasks/score", json={"handle": handle, "submission": "{}"})
            handles += unscored
            unscored.clear()
            groups = await asyncio.gather(*(pull({"n": 1, "group": 4}) for _ in range(3)))
            return results + list(groups), handles + unscored, peak

    results, handles, peak = asyncio.run(attack())
    assert sorted(results) == ["ok"] * 2 + ["too_many"] * 9 and peak == 4
    assert len(handles) == 8 and len(set(handles)) == 8


def test_revoking_a_consumer_ends_its_running_pull(streams: dict[str, Stream]) -> None:
    """After a revoke, 29 of 30 tasks of the consumer's running pull once still arrived;
    now the pull ends with an `unauthorized` line, no task is issued after the revoke
    and its handles are forgotten. (Tasks the server wrote before the revoke may still
    sit in the socket's buffers: how many depends on their size, so the test counts
    issues on the server, not arrivals: small design-family tasks once let 5 arrive
    against a bound of 4.)"""
    beta = streams["beta"]
    operator = beta.operator()
    got: list[Any] = []
    at_revoke = -1

    def delivered() -> int:
        [view] = [c for c in operator.status().consumers if c.name == "doomed"]
        return view.tasks_delivered

    with beta.client(beta.mint("doomed")) as client:
        with pytest.raises(StreamError, match="revoked") as caught:
            for task in client.iter_tasks(30):
                got.append(task)
                if len(got) == 2:
                    operator.revoke("doomed")
                    at_revoke = delivered()
        assert caught.value.code == "unauthorized"
        with pytest.raises(StreamError, match="valid token"):
            client.me()
        with pytest.raises(StreamError, match="valid token"):
            client.score(got[0].handle, answer_for(got[0]))
    [view] = [c for c in operator.status().consumers if c.name == "doomed"]
    assert 2 <= len(got) <= view.tasks_delivered == at_revoke < 30, (len(got), at_revoke, view)
    assert view.revoked and (view.handles_outstanding, view.handles_reserved) == (0, 0)


def test_a_name_minted_again_starts_afresh(streams: dict[str, Stream]) -> None:
    """A re-minted name once inherited the old holder's counters and could score its
    handles; each mint is now a consumer of its own."""
    beta = streams["beta"]
    with beta.client(beta.mint("again")) as old:
        tasks = old.pull_tasks(2)
        old.score(tasks[0].handle, answer_for(tasks[0]))
    assert beta.cli("token revoke", "again").returncode == 0
    with beta.client(beta.mint("again")) as new:
        me = new.me()
        assert (me.tasks_delivered, me.tasks_scored, me.handles_outstanding) == (0, 0, 0)
        for task in tasks:
            with pytest.raises(StreamError, match="unknown handle"):
                new.score(task.handle, answer_for(task))
    entries = [c for c in beta.operator().status().consumers if c.name == "again"]
    assert sorted((c.revoked, c.tasks_scored) for c in entries) == [(False, 0), (True, 1)]


def test_the_audit_log_says_who_did_what_and_holds_no_token(
    streams: dict[str, Stream], tokens: dict[str, str], tmp_path: Path
) -> None:
    alpha = streams["alpha"]
    minted = alpha.mint("audited")
    assert alpha.cli("token revoke", "audited").returncode == 0
    assert alpha.cli("export-key", "--to", str(tmp_path / "audit.key")).returncode == 0
    operator = alpha.operator()
    settings = {
        "endpoint": {
            "base_url": "http://127.0.0.1:9/v1",
            "model": "audited-model",
            "api_key": "sk-by-value-" + "q" * 20,
        },
        "policy_version": 5,
    }
    operator.configure(settings)  # fmt: skip
    operator.set_policy_version(6)
    guess = {"Authorization": "Bearer cgs_c_" + "G" * 43}
    assert httpx.get(alpha.url + "/v1/me", headers=guess, timeout=30).status_code == 401
    as_consumer = {"Authorization": f"Bearer {tokens['alpha/two']}"}
    reply = httpx.get(alpha.operator_url + "/v1/operator/status", headers=as_consumer, timeout=30)
    assert reply.status_code == 403
    audit = alpha.state_dir / "audit.jsonl"
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600
    records = alpha.audit()
    by_event: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_event.setdefault(record["event"], []).append(record)
    [start] = by_event["start"]
    state = json.loads((alpha.state_dir / "stream.json").read_text())
    assert start["url"] == alpha.url and start["operator_url"] == state["operator_url"]
    assert state["operator_url"].startswith("http://127.0.0.1:") and alpha.url != alpha.operator_url
    assert {"audited", "one", "two"} <= {r["consumer"] for r in by_event["mint"]}
    assert {"consumer": "audited", "client": "127.0.0.1"}.items() <= by_event["revoke"][-1].items()
    assert by_event["export_key"][-1]["path"] == str(tmp_path / "audit.key")
    configured = by_event["configure_episodes"][-1]
    assert (configured["model"], configured["api_key_from"]) == ("audited-model", "value")
    assert by_event["policy_version"][-1]["version"] == 6
    assert {"route": "GET /v1/operator/status", "consumer": "two", "client": "127.0.0.1"}.items(
    ) <= by_event["forbidden"][-1].items()  # fmt: skip
    assert any(r["route"] == "GET /v1/me" for r in by_event["unauthorized"])
    for record in records:
        if record["event"] not in ("start", "stopped", "held_back"):
            assert record["client"] == "127.0.0.1", record
    text = audit.read_text()
    for token in (*tokens.values(), minted, alpha.operator_token):
        assert token not in text and token[6:14] not in text
    assert "sk-by-value" not in text and "sk-model-server-key" not in text
