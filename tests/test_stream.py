"""Trainer streams on a real Ray cluster (one head node with the head resource):
two streams, task mode, episode mode against a scripted chat-completions server,
bounds, bad requests, and where the key is (only in the stream's own process)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from causal_gym.generate import generate_task
from causal_gym.reference.probes import Staged, honest
from causal_gym.rng_keys import parse_key_hex
from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from tests.support.openai_server import Reply, ScriptedOpenAIServer, ServerScript, scripted_logprobs
from tests.support.ray_cluster import RayCluster, process_environments, session_of, start_cluster

pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]
RUN = str(Path(sys.executable).with_name("causal-gym-run"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    cluster = start_cluster(head_cpus=2, worker_cpus=0)
    try:
        yield cluster
    finally:
        import ray

        ray.shutdown()  # this process is a driver of the cluster: leave before it goes
        cluster.stop()


def cli(cluster: RayCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUN, "stream", *args, "--address", cluster.address],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def streams(cluster: RayCluster) -> Iterator[list[str]]:
    names = ["alpha", "beta"]
    for name in names:
        started = cli(
            cluster,
            "start",
            name,
            "--concurrency",
            "2",
            "--episodes-per-actor",
            "2",
            "--handle-ttl",
            "20",
        )
        assert started.returncode == 0, started.stderr
    try:
        yield names
    finally:
        for name in names:
            cli(cluster, "stop", name)


def client_for(cluster: RayCluster, name: str) -> Any:
    os.environ["RAY_AUTH_MODE"] = "token"
    from orchestrator.stream import StreamClient

    return StreamClient(name, address=cluster.address)


def honest_answer(task: Any) -> dict[str, Any]:
    return honest(Staged.parse(task.files["data.csv"], task.files["README.md"].decode()))


def test_two_streams_never_produce_the_same_task(cluster: RayCluster, streams: list[str]) -> None:
    seen = []
    for name in streams:
        client = client_for(cluster, name)
        seen.append(
            {hashlib.sha256(t.files["data.csv"]).hexdigest() for t in client.pull_tasks(30)}
        )
    assert len(seen[0]) == 30 and len(seen[1]) == 30 and not seen[0] & seen[1]
    fingerprints = {
        json.loads(cli(cluster, "status", n).stdout)["key_fingerprint"] for n in streams
    }
    assert len(fingerprints) == 2


def test_task_mode_round_trips_like_causal_gym_score(
    cluster: RayCluster, streams: list[str], tmp_path: Path
) -> None:
    key_file = tmp_path / "alpha.key"
    exported = cli(cluster, "export-key", "alpha", "--to", str(key_file))
    assert exported.returncode == 0, exported.stderr
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    key = parse_key_hex(key_file.read_text(), "export")
    client = client_for(cluster, "alpha")
    tasks = client.pull_tasks(3)
    # scored first: a handle expires (20 s here), and finding the ids below takes longer
    answered = []
    for task in tasks:
        answer = honest_answer(task)
        answered.append((task, answer, client.score(task.handle, answer)))
    # the ids never left the head: find them by content under the exported key
    by_hash = {}
    for index in range(40):
        for family in ("ate", "adjustment", "null_detect"):
            task_id = f"train:{family}:{index}"
            by_hash[generate_task(task_id, key).public.sha256("data.csv")] = task_id
    for task, answer, scored in answered:
        task_id = by_hash[hashlib.sha256(task.files["data.csv"]).hexdigest()]
        path = tmp_path / "answer.json"
        path.write_text(json.dumps(answer))
        reference = subprocess.run(
            [
                str(Path(sys.executable).with_name("causal-gym")),
                "score",
                task_id,
                str(path),
                "--key-file",
                str(key_file),
            ],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"},
        )
        assert reference.returncode == 0, reference.stderr
        assert scored.valid and scored.reward == pytest.approx(
            json.loads(reference.stdout)["reward"], rel=1e-12
        )
        if generate_task(task_id, key).public.tier.value != "expert":
            assert scored.width_ratio == pytest.approx(1.0)  # expert: r is the bound, below


def test_handles_are_single_use_and_expire_and_bad_pulls_are_clear(
    cluster: RayCluster, streams: list[str]
) -> None:
    from orchestrator.stream import StreamError

    client = client_for(cluster, "beta")
    [task] = client.pull_tasks(1)
    answer = honest_answer(task)
    assert client.score(task.handle, answer).valid
    for bad in (task.handle, "never-issued-handle"):
        with pytest.raises(StreamError, match="unknown handle"):
            client.score(bad, answer)
    [late] = client.pull_tasks(1)
    time.sleep(21)  # --handle-ttl 20
    with pytest.raises(StreamError, match="expired"):
        client.score(late.handle, answer)
    with pytest.raises(StreamError, match="1 to 1024"):
        client.pull_tasks(5000)
    invalid = client.pull_tasks(1)[0]
    result = client.score(invalid.handle, {"estimate": 1.0})
    assert not result.valid and result.reward == -1.0 and result.errors
    assert client.stats().tasks_scored == 2  # the valid and the invalid one; it serves on


def replay(messages: list[dict[str, Any]]) -> Reply:
    """A policy served by the trainer: answers at once, in its task's answer type."""
    readme = next(str(m["content"]) for m in messages if m.get("role") == "user")
    family = re.search(r"Answer type: `(\w+)`", readme)
    answer: dict[str, Any] = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
    if family and family.group(1) == "adjustment":
        answer["adjustment_set"] = []
    if family and family.group(1) == "null_detect":
        answer["effect_probability"] = 0.65
    return Reply(tool="submit_answer", arguments=answer)


def test_episode_mode_buffers_within_the_bound_and_passes_logprobs_unchanged(
    cluster: RayCluster, streams: list[str]
) -> None:
    from orchestrator.stream import EpisodeSettings, StreamError

    with ScriptedOpenAIServer(ServerScript(replay)) as server:
        client = client_for(cluster, "alpha")
        endpoint = OpenAIPolicyConfig(
            base_url=server.base_url, model="scripted", logprobs=True, top_logprobs=0
        )
        settings = EpisodeSettings(
            endpoint=endpoint, batch_size=2, buffer_factor=2.0, policy_version=1
        )
        bound = client.configure(settings)
        assert bound == 4
        peak = 0
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # a consumer that does not pull
            stats = client.stats()
            peak = max(peak, stats.episodes_running + stats.episodes_buffered)
            time.sleep(0.2)
        assert stats.episodes_buffered >= 1 and peak <= bound
        with pytest.raises(StreamError, match="1 to 4"):
            client.pull_episodes(10)
        client.set_policy_version(2)
        stale_before = client.stats().episodes_stale
        fresh = client.pull_episodes(4, min_policy_version=2, timeout_s=60)
        assert fresh and all(r.policy_version == 2 for r in fresh)
        assert client.stats().episodes_stale > stale_before  # version-1 rollouts counted
        rollout = fresh[0]
        assert rollout.status == "submitted"
        assert rollout.components["width_ratio"] is not None  # scored on the head
        assert rollout.messages[0]["role"] == "system"
        choice = rollout.completions[0]["choices"][0]
        assert choice["logprobs"]["content"] == scripted_logprobs(1)  # unchanged, as sent
        assert choice["token_ids"] == [7, 8, 9, 10, 11]
        sent = server.chat_requests[0]["body"]
        assert sent["logprobs"] is True


def test_an_endpoint_that_stops_answering_becomes_statuses(
    cluster: RayCluster, streams: list[str]
) -> None:
    from orchestrator.stream import EpisodeSettings

    client = client_for(cluster, "beta")
    dead = OpenAIPolicyConfig(
        base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, backoff_s=0.01
    )
    client.configure(EpisodeSettings(endpoint=dead, batch_size=2))
    rollouts = client.pull_episodes(2, timeout_s=60)
    assert rollouts and all(r.status == "model_error" and r.reward == -1.0 for r in rollouts)
    assert client.pull_tasks(1)  # task mode unaffected


def test_the_key_is_only_in_the_stream_process(
    cluster: RayCluster, streams: list[str], tmp_path: Path
) -> None:
    key_file = tmp_path / "beta.key"
    assert cli(cluster, "export-key", "beta", "--to", str(key_file)).returncode == 0
    secret = key_file.read_text().strip()
    raw = bytes.fromhex(secret)
    consumer = subprocess.Popen(
        [sys.executable, "-c", CONSUMER, cluster.address],
        env={**cluster.env, "PYTHONPATH": str(Path.cwd())},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert consumer.stdout is not None and consumer.stdout.readline().strip() == "scored"
    try:
        assert not memory_holds(consumer.pid, (secret.encode(), raw))
        ray_sessions = {p.pid for p in cluster.procs}
        for pid, blob in process_environments().items():
            assert secret.encode() not in blob, pid
            if session_of(pid) in ray_sessions and b"ray::EpisodeWorker" in blob:
                assert not memory_holds(pid, (secret.encode(), raw)), pid
    finally:
        consumer.kill()
        consumer.wait()


CONSUMER = """
import sys
from orchestrator.stream import StreamClient
client = StreamClient("beta", address=sys.argv[1])
for task in client.pull_tasks(3):
    client.score(task.handle, {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0})
print("scored", flush=True)
sys.stdin.read()
"""


PULLS_AND_VANISHES = """
import sys
from orchestrator.stream import StreamClient
client = StreamClient("alpha", address=sys.argv[1])
client.pull_tasks(3)
print("scored", flush=True)
sys.stdin.read()
"""


def memory_holds(pid: int, needles: tuple[bytes, ...]) -> bool:
    """Whether any readable mapping of the process contains one of the needles."""
    found = False
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
                found = True
                break
    return found


def test_a_consumer_that_vanishes_costs_nothing_lasting(
    cluster: RayCluster, streams: list[str]
) -> None:
    victim = subprocess.Popen(
        [
            sys.executable,
            "-c",
            PULLS_AND_VANISHES,
            cluster.address,
        ],
        env={**cluster.env, "PYTHONPATH": str(Path.cwd())},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert victim.stdout is not None and victim.stdout.readline().strip() == "scored"
    before = client_for(cluster, "alpha").stats().handles_outstanding
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    time.sleep(21)
    stats = client_for(cluster, "alpha").stats()
    assert stats.handles_outstanding < before and stats.handles_expired >= 3


def test_the_demo_trainer_improves_its_reward(
    cluster: RayCluster, streams: list[str], tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "scripts/demo_trainer.py",
            "--address",
            cluster.address,
            "--stream",
            "beta",
            "--steps",
            "24",
            "--batch",
            "16",
            "--start-width",
            "0.3",
            "--out",
            str(tmp_path),
        ],
        env={**cluster.env, "PYTHONPATH": str(Path.cwd())},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    curve = json.loads((tmp_path / "learning_curve.json").read_text())
    rewards = [step["mean_reward"] for step in curve["steps"]]
    # 64 tasks on each side: the width-0.3 start pays about 0.3 more in expectation,
    # several standard errors of a 64-task mean of clipped rewards
    assert sum(rewards[-4:]) / 4 > sum(rewards[:4]) / 4
    widths = [step["width_multiplier"] for step in curve["steps"]]
    assert abs(widths[-1] - 1.0) < abs(widths[0] - 1.0)
    assert (tmp_path / "learning_curve.png").stat().st_size > 1000
    assert re.search(r"width multiplier .* -> ", proc.stdout)


def test_the_async_api_round_trips(cluster: RayCluster, streams: list[str]) -> None:
    import asyncio

    client = client_for(cluster, "beta")

    async def trainer_step() -> list[float]:
        tasks = await client.pull_tasks_async(3)
        scores = await asyncio.gather(
            *(client.score_async(t.handle, honest_answer(t)) for t in tasks)
        )
        return [s.reward for s in scores if s.valid]

    rewards = asyncio.run(trainer_step())
    assert len(rewards) == 3 and all(-50 < r <= 1.0 for r in rewards)


def test_a_stream_serves_the_multi_estimand_families(cluster: RayCluster) -> None:
    """Pulled tasks carry their estimand names (cate's levels) and every staged file;
    the reference answer scores through the stream, and a level the task does not
    have is refused by name instead of scored."""
    from causal_gym.reference.analyst import files_answer

    started = cli(cluster, "start", "gamma", "--families", "cate,mediation,obs_vs_rct",
                  "--concurrency", "1", "--episodes-per-actor", "1")  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        client = client_for(cluster, "gamma")
        first: dict[str, Any] = {}  # tasks come as they finish generating: one per family
        for task in client.pull_tasks(9):
            first.setdefault(task.family.value, task)
        assert sorted(first) == ["cate", "mediation", "obs_vs_rct"]
        assert "trial.csv" in first["obs_vs_rct"].files and len(first["cate"].estimands) >= 3
        for task in first.values():
            scored = client.score(task.handle, files_answer(dict(task.files)))
            assert scored.valid and scored.reward > 0.0, scored
        cate = next(t for t in client.pull_tasks(6) if t.family.value == "cate")
        interval = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
        wrong = client.score(cate.handle, {"effects": {"no-such-level": interval}})
        assert not wrong.valid and any("unknown levels" in e for e in wrong.errors)
    finally:
        cli(cluster, "stop", "gamma")
