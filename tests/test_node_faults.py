"""Faults of a cluster, on a real three-node Ray cluster on this machine (a head with the
head resource and two worker nodes): a worker node lost mid-run (SIGKILL of its
raylet), a worker node that stops answering for 60 s (SIGSTOP of its raylet, then
SIGCONT), and on the embedded instance the head's own actors killed. Each run must
end with exactly one final record per task, every re-run recorded with its cause,
and nothing of a lost node left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from orchestrator.records.read_back import read_records
from orchestrator.run.config import load_config
from tests.support.ray_cluster import (
    RayCluster,
    descends_from,
    process_environments,
    session_of,
    start_cluster,
)

pytestmark = [pytest.mark.ray, pytest.mark.slow, pytest.mark.xdist_group("ray")]
RUN = str(Path(sys.executable).with_name("causal-gym-run"))
SECRET = "5a" * 32
TASKS = 240


def _start_run(cluster: RayCluster | None, out: Path, *extra: str) -> subprocess.Popen[str]:
    """A run of TASKS simulated model-bound episodes (4 turns of 1 s), 40 at once on
    actors of 10, each actor 1 CPU: on the cluster both worker nodes hold some of them
    (on the embedded instance, 2 CPUs, the actors take 0.5 CPU each)."""
    cpus = "0.1" if cluster is not None else "0.05"
    args = [
        "--split", "train", "-n", str(TASKS), "--agent", "simulated:1:4", "--out", str(out),
        "--concurrency", "40", "--episodes-per-actor", "10", "--cpus-per-episode", cpus,
        *extra,
    ]  # fmt: skip
    env = {**(cluster.env if cluster else os.environ), "CAUSAL_GYM_KEY": SECRET}
    if cluster is not None:
        args += ["--address", cluster.address]
    return subprocess.Popen(
        [RUN, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for_records(out: Path, count: int, driver: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and driver.poll() is None:
        results = out / "results.jsonl"
        if results.exists() and results.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"the run did not reach {count} records (exit {driver.poll()})")


def _busiest_worker(out: Path, cluster: RayCluster) -> str:
    """The worker node holding the most sandbox actors (placement.json)."""
    placed = json.loads((out / "placement.json").read_text())
    counts = Counter(str(w["node"]) for w in placed["workers"])
    workers = set(cluster.workers())
    assert len(workers) == 2 and set(counts) == workers, (counts, workers)
    return counts.most_common(1)[0][0]


def _task_ids(out: Path) -> list[str]:
    config = load_config(None, {"split": "train", "n": TASKS, "out": str(out)})
    return config.task_ids()


def _assert_each_task_once(out: Path, cause: str) -> list:
    found = list(read_records(out))
    finals = Counter(r.task_id for r in found if r.final)
    assert sorted(finals) == sorted(_task_ids(out)) and set(finals.values()) == {1}
    assert all(r.status == "submitted" for r in found if r.final)
    rerun = [r for r in found if r.failure_class == cause]
    assert rerun, f"no attempt was recorded as {cause}"
    assert all(not r.final and r.retryable for r in rerun)
    # every re-run attempt has a later attempt of the same task
    attempts = {(r.task_id, r.attempt) for r in found}
    assert all((r.task_id, r.attempt + 1) in attempts for r in rerun)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures_by_class"][cause] == len(rerun)
    assert summary["episodes"] == TASKS
    return rerun


def _title(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _assert_gone(session: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in process_environments() if session_of(p) == session]
        if not left:
            return
        time.sleep(1)
    raise AssertionError(f"processes of the lost node are still running: {left}")


def test_a_worker_node_lost_mid_run_has_its_episodes_run_again_once(tmp_path: Path) -> None:
    cluster = start_cluster(worker_cpus=4, workers=2, quick_health_checks=True)
    try:
        out = tmp_path / "run"
        driver = _start_run(cluster, out)
        _wait_for_records(out, 20, driver)
        session = cluster.kill_node(_busiest_worker(out, cluster))
        _, stderr = driver.communicate(timeout=600)
        assert driver.returncode == 0, stderr
        lost = _assert_each_task_once(out, "node_lost")
        assert all("its node was lost: node" in (r.message or "") for r in lost)
        assert "node_lost" in (out / "report.md").read_text()
        _assert_gone(session)
    finally:
        cluster.stop()


def test_a_worker_node_silent_for_60_s_has_its_episodes_run_again_once(tmp_path: Path) -> None:
    """SIGSTOP of the raylet: the node's workers still run but it no longer answers the
    GCS, which declares it dead; its episodes run elsewhere. After SIGCONT the node
    learns it was declared dead and goes away with everything it ran."""
    cluster = start_cluster(worker_cpus=4, workers=2, quick_health_checks=True)
    try:
        out = tmp_path / "run"
        driver = _start_run(cluster, out)
        _wait_for_records(out, 20, driver)
        raylet = cluster.raylet(_busiest_worker(out, cluster))
        session = session_of(raylet)
        assert session is not None
        os.kill(raylet, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            _, stderr = driver.communicate(timeout=600)
        finally:
            time.sleep(max(0.0, 60 - (time.monotonic() - stopped)))
            os.kill(raylet, signal.SIGCONT)
        assert driver.returncode == 0, stderr
        _assert_each_task_once(out, "node_lost")
        _assert_gone(session)
    finally:
        cluster.stop()


@pytest.mark.parametrize("title", [b"ray::Recorder", b"ray::TaskGenerator"])
def test_a_killed_head_actor_stops_the_run_and_resume_completes_it(
    tmp_path: Path, title: bytes
) -> None:
    """The recorder (results.jsonl) or the generator (the truths it scores against)
    SIGKILLed mid-run on the embedded instance: exit 1 naming --resume, every line on
    disk intact, nothing left running; --resume finishes with one final per task."""
    out = tmp_path / "run"
    driver = _start_run(None, out)
    _wait_for_records(out, 20, driver)
    victims = [
        pid
        for pid in process_environments()
        if _title(pid).startswith(title) and descends_from(pid, driver.pid)
    ]
    assert victims, f"no {title!r} process"
    os.kill(victims[0], signal.SIGKILL)
    _, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 1 and "--resume" in stderr, stderr
    assert not (out / "results.rejected.jsonl").exists()
    on_disk = list(read_records(out))
    assert len(on_disk) == (out / "results.jsonl").read_bytes().count(b"\n") >= 20
    time.sleep(2)
    assert not [p for p in process_environments() if descends_from(p, driver.pid)]
    resumed = _start_run(None, out, "--resume")
    _, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, stderr
    finals = Counter(r.task_id for r in read_records(out) if r.final)
    assert sorted(finals) == sorted(_task_ids(out)) and set(finals.values()) == {1}
