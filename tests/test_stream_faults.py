"""Episode-mode streams under the faults of a cluster: a real stream on a real
three-node Ray cluster on this machine, a worker node lost (SIGKILL of its raylet)
while rollouts run there. Every rollout begun is delivered, buffered, running or
dropped as stale, never silently missing; those on the lost node run again (or come
back with the status `node_lost`), and the consumer gets exactly what it is counted
for."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, ServerScript
from tests.support.ray_cluster import RayCluster, process_environments, session_of, start_cluster
from tests.support.streams import start_stream

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.xdist_group("ray")]
ANSWER: dict[str, Any] = {
    "estimate": 0.0,
    "ci_lower": -1.0,
    "ci_upper": 1.0,
    "adjustment_set": [],
    "effect_probability": 0.5,
}


def _answer(messages: list[dict[str, Any]]) -> Reply:
    readme = next(str(m["content"]) for m in messages if m.get("role") == "user")
    answer = dict(ANSWER)
    if "Answer type: `ate`" in readme:
        answer = {k: answer[k] for k in ("estimate", "ci_lower", "ci_upper")}
    elif "Answer type: `adjustment`" in readme:
        answer.pop("effect_probability")
    else:
        answer.pop("adjustment_set")
    return Reply(tool="submit_answer", arguments=answer)


def _node_running_episodes(cluster: RayCluster) -> str:
    """A worker node whose session holds a sandbox actor."""
    actors = {
        pid
        for pid in process_environments()
        if Path(f"/proc/{pid}/cmdline").exists() and _cmdline(pid).startswith(b"ray::EpisodeWorker")
    }
    for node in cluster.workers():
        session = session_of(cluster.raylet(node))
        if any(session_of(pid) == session for pid in actors):
            return node
    raise AssertionError("no worker node runs a sandbox actor")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _adds_up(stats: Any) -> None:
    assert stats.episodes_started == (
        stats.episodes_running
        + stats.episodes_buffered
        + stats.episodes_delivered
        + stats.episodes_stale
    ), stats


def test_a_lost_node_s_rollouts_run_again_and_every_count_adds_up(tmp_path: Path) -> None:
    cluster = start_cluster(worker_cpus=4, workers=2, quick_health_checks=True)
    stream = None
    try:
        stream = start_stream(
            "faults", tmp_path / "faults", "--address", cluster.address,
            "--concurrency", "8", "--episodes-per-actor", "2", env=cluster.env,
        )  # fmt: skip
        token = stream.mint("trainer")
        operator = stream.operator()
        # each episode waits 3 s for the model: rollouts are in flight when the node goes
        with ScriptedOpenAIServer(ServerScript(_answer, hang_seconds=3.0)) as server:
            operator.configure(
                {"endpoint": {"base_url": server.base_url, "model": "scripted"},
                 "batch_size": 8, "buffer_factor": 2.0}
            )  # fmt: skip
            received: list[Any] = []
            with stream.client(token) as client:
                while len(received) < 4:
                    received += client.pull_episodes(4, timeout_s=120)
                victim = _node_running_episodes(cluster)
                session = cluster.kill_node(victim)
                deadline = time.monotonic() + 300
                while time.monotonic() < deadline:
                    received += client.pull_episodes(8, timeout_s=60)
                    stats = operator.status()
                    _adds_up(stats)
                    if stats.episodes_nodes_lost and len(received) >= 40:
                        break
            stats = operator.status()
        _adds_up(stats)
        assert stats.episodes_nodes_lost >= 1 and stats.episodes_actors_lost >= 1
        lost_twice = [r for r in received if r.status == "node_lost"]
        rerun = [r for r in received if r.attempts > 1]
        assert rerun or lost_twice, "no rollout of the lost node came back"
        assert stats.episodes_retried >= len(rerun)
        assert {r.status for r in received} <= {"submitted", "node_lost"}
        assert all(r.reward == -1.0 for r in lost_twice)
        assert len({r.handle for r in received}) == len(received)  # none twice
        mine = next(c for c in stats.consumers if c.name == "trainer")
        assert mine.episodes_delivered == len(received) == stats.episodes_delivered
        left = [p for p in process_environments() if session_of(p) == session]
        deadline = time.monotonic() + 60
        while left and time.monotonic() < deadline:
            time.sleep(1)
            left = [p for p in process_environments() if session_of(p) == session]
        assert not left, f"processes of the lost node are still running: {left}"
    finally:
        if stream is not None:
            stream.stop()
        cluster.stop()
