"""The Ray runner end to end, on real Ray: an embedded local instance, and a real
two-node cluster on this machine (a head with the head resource, a second node
without). All Ray tests run in one xdist group, one after another."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from causal_gym.reference.probes import Staged, honest
from causal_gym.scoring.answer import episode_score
from causal_gym.versions import reward_version
from orchestrator.records.read_back import read_records
from tests.conftest import cached_task
from tests.support.cli import orchestrator_cli
from tests.support.ray_cluster import (
    descends_from,
    process_environments,
    session_of,
    start_cluster,
)

pytestmark = [pytest.mark.ray, pytest.mark.sandbox, pytest.mark.xdist_group("ray")]
RUN = str(Path(sys.executable).with_name("causal-gym-run"))
SECRET = "5a" * 32


def records(out: Path) -> list:
    return list(read_records(out))


def test_reference_run_reproduces_the_honest_scores(tmp_path: Path) -> None:
    """Every final record equals the honest reference answer scored directly on the
    same task: the runner adds nothing and loses nothing."""
    out = tmp_path / "run"
    proc = orchestrator_cli(
        "--split", "eval-v1", "--per-family", "6", "--start", "40", "--agent", "reference",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = {r.task_id: r for r in records(out) if r.final}
    assert len(found) == 18 and all(r.status == "submitted" for r in found.values())
    expected = []
    for task_id, record in found.items():
        task = cached_task(task_id)
        answer = honest(
            Staged.parse(task.public.files["data.csv"], task.public.files["README.md"].decode())
        )
        direct = episode_score(task, answer)
        assert record.reward == pytest.approx(direct.reward, rel=1e-9, abs=1e-12), task_id
        assert record.width_ratio == pytest.approx(direct.fields()["width_ratio"], rel=1e-9)
        assert 0.95 < record.width_ratio < 1.3  # the honest width over the optimal OLS's
        assert record.reward_version == reward_version("eval-v1")
        expected.append(direct.reward)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mean_reward"] == pytest.approx(float(np.mean(expected)), rel=1e-9)
    assert summary["episodes"] == 18 and summary["retry_incidence"] == 0.0
    assert "| `reference` | scripted |" in proc.stdout
    # stderr is not a terminal here: the live view came as plain lines, ending at 18/18
    assert "reference on eval-v1: 18/18 done  running 0" in proc.stderr, proc.stderr[-2000:]
    for name in ("report.md", "reward_by_family.png", "width_ratio.png", "coverage_by_family.png"):
        assert (out / name).stat().st_size > 100
    # nothing publishable names a task
    for name in ("summary.json", "report.md"):
        assert "eval-v1:" not in (out / name).read_text()


def test_a_hanging_user_policy_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    source = tmp_path / "hang.py"
    source.write_text(
        "import time\nfrom orchestrator.agents import Policy\n"
        "class Hang(Policy):\n    def next_turn(self, messages, deadline_s):\n"
        "        time.sleep(10_000)\n"
    )
    out = tmp_path / "run"
    started = time.monotonic()
    proc = orchestrator_cli(
        "--split", "eval-v1", "-n", "1", "--agent", f"python:{source}:Hang", "--timeout", "4",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = records(out)
    # the agent's own turn used the budget: final at once, never retried
    assert [(r.attempt, r.final, r.failure_class, r.timeout_cause) for r in found] == [
        (0, True, "timeout", "agent"),
    ]
    assert all(r.wall_s < 4 + 10 for r in found)
    assert time.monotonic() - started < 120


def test_resume_refuses_another_run_and_a_finished_one_runs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = orchestrator_cli(
        "--split", "eval-v1", "-n", "2", "--agent", "constant", "--out", str(out)
    )
    assert first.returncode == 0, first.stderr
    again = orchestrator_cli(
        "--split", "eval-v1", "-n", "2", "--agent", "constant", "--out", str(out)
    )
    assert again.returncode == 2 and "pass --resume" in again.stderr
    other = orchestrator_cli(
        "--split", "eval-v1", "-n", "2", "--agent", "reference", "--out", str(out), "--resume"
    )
    assert other.returncode == 2 and "different configuration" in other.stderr
    lines = (out / "results.jsonl").read_text()
    same = orchestrator_cli(
        "--split", "eval-v1", "-n", "2", "--agent", "constant", "--out", str(out), "--resume"
    )
    assert same.returncode == 0, same.stderr
    assert (out / "results.jsonl").read_text() == lines  # nothing ran twice


@pytest.mark.slow
def key_folders_of(pid: int) -> list[Path]:
    """The head key folders a runner process made (named after their owner)."""
    from orchestrator.run.head_key import key_folders

    return list(key_folders().glob(f"causal-gym-key-{pid}.*"))


def test_killing_the_driver_then_resume_runs_exactly_the_missing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--split", "eval-v1", "-n", "12", "--agent", "simulated:0.5:3", "--out", str(out)]
    driver = subprocess.Popen(
        [RUN, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        done = [r for r in records(out)] if (out / "results.jsonl").exists() else []
        if len(done) >= 3:
            break
        time.sleep(0.5)
    left_behind = key_folders_of(driver.pid)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait(timeout=30)
    assert left_behind and all(f.exists() for f in left_behind)  # SIGKILL: no cleanup
    before = {r.task_id for r in records(out) if r.final}
    assert 3 <= len(before) < 12
    resumed = subprocess.run([RUN, *args, "--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert not any(f.exists() for f in left_behind)  # the next run removed the dead key
    after = [r for r in records(out) if r.final]
    ids = [r.task_id for r in after]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 12  # each task once, none lost
    assert {r.task_id for r in after} >= before


@pytest.mark.slow
def test_sigterm_stops_a_run_like_ctrl_c_and_leaves_nothing(tmp_path: Path) -> None:
    """SIGTERM after the first record. Two episodes run at a time for 15 s each, so
    when the first record is on disk at least four of the eight tasks cannot have
    started: on a loaded machine the scorer (which rebuilds each task's truth) lags
    the 3 s episodes this test used to run, and all eight were done and queued for
    scoring by the time the first record appeared."""
    out = tmp_path / "run"
    args = ["--split", "eval-v1", "-n", "8", "--agent", "simulated:5:3", "--out", str(out)]
    args += ["--concurrency", "2"]
    driver = subprocess.Popen(
        [RUN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not ((out / "results.jsonl").exists() and records(out)):
        time.sleep(0.5)
    family = [pid for pid in process_environments() if descends_from(pid, driver.pid)]
    assert family and key_folders_of(driver.pid), "the run never got going"
    driver.send_signal(signal.SIGTERM)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr and "--resume" in stderr
    assert not key_folders_of(driver.pid)  # removed by the finally blocks, not left to a reaper
    settle = time.monotonic() + 30
    while time.monotonic() < settle and any(Path(f"/proc/{p}").exists() for p in family):
        time.sleep(0.5)
    assert not [p for p in family if Path(f"/proc/{p}").exists()]  # Ray and sandboxes gone
    finished = records(out)
    assert finished and all(r.final for r in finished) and len(finished) < 8


@pytest.mark.slow
def test_a_killed_sandbox_actor_is_replaced_and_its_episode_retried(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [
        "--split",
        "eval-v1",
        "-n",
        "8",
        "--agent",
        "simulated:1:4",
        "--out",
        str(out),
        "--concurrency",
        "2",
    ]
    driver = subprocess.Popen(
        [RUN, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Once the first attempt is on disk, each actor is busy with the next one (an
    # actor runs several threads, so its title does not name the method it runs).
    victim = None
    deadline = time.monotonic() + 180
    while victim is None and time.monotonic() < deadline:
        time.sleep(0.2)
        if not (out / "results.jsonl").exists() or not (out / "results.jsonl").stat().st_size:
            continue
        for pid, blob in process_environments().items():
            if b"ray::EpisodeWorker" in blob and descends_from(pid, driver.pid):
                victim = pid
                break
    assert victim is not None, "no sandbox actor was running an episode"
    os.kill(victim, signal.SIGKILL)
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr
    found = records(out)
    lost = [r for r in found if r.failure_class == "lost"]
    assert lost and all(not r.final and r.retryable for r in lost)
    final = [r for r in found if r.final]
    assert len(final) == 8 and all(r.status == "submitted" for r in final)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failures_by_class"]["lost"] == len(lost)
    assert summary["retried_tasks"] >= 1


@pytest.mark.slow
def test_two_node_cluster_keeps_key_and_truth_on_the_head(tmp_path: Path) -> None:
    cluster = start_cluster(worker_cpus=2)
    try:
        nodes = cluster.nodes()
        head = next(n["id"] for n in nodes if n["resources"].get("causal_gym_head"))
        worker = next(n["id"] for n in nodes if not n["resources"].get("causal_gym_head"))
        out = tmp_path / "run"
        env = {**cluster.env, "CAUSAL_GYM_KEY": SECRET}
        args = [
            "--split", "eval-v1", "-n", "4", "--agent", "reference", "--out", str(out),
            "--address", cluster.address, "--concurrency", "2",
        ]  # fmt: skip
        driver = subprocess.Popen(
            [RUN, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        ray_sessions = {proc.pid for proc in cluster.procs}  # every process of both nodes
        leaks: set[int] = set()
        while driver.poll() is None:
            leaks |= {
                pid
                for pid, blob in process_environments().items()
                if SECRET.encode() in blob and session_of(pid) in ray_sessions
            }
            time.sleep(0.3)
        _, stderr = driver.communicate()
        assert driver.returncode == 0, stderr
        assert not leaks, f"processes with the key in their environment or arguments: {leaks}"
        placement = json.loads((out / "placement.json").read_text())
        assert placement["head"] == [head]  # generator and scorer
        assert {w["node"] for w in placement["workers"]} == {worker}  # sandbox actors
        final = [r for r in records(out) if r.final]
        assert len(final) == 4 and all(r.status == "submitted" for r in final)
        scan_for_secrets(out, SECRET, published_only=False)
        for log in Path("/tmp/ray").glob("session_*/logs/*"):
            if log.is_file():
                assert SECRET.encode() not in log.read_bytes(), log
    finally:
        cluster.stop()


def scan_for_secrets(out: Path, secret: str, published_only: bool) -> None:
    for path in out.iterdir():
        data = path.read_bytes()
        assert secret.encode() not in data, path
        if path.name not in ("run.json", "results.jsonl", "transcripts.jsonl", "placement.json"):
            assert b"eval-v1:" not in data and b"train:" not in data, path


def test_no_head_resource_is_a_clear_error(tmp_path: Path) -> None:
    cluster = start_cluster(head_resource=False, worker_cpus=1)
    try:
        proc = subprocess.run(
            [RUN, "-n", "1", "--address", cluster.address, "--out", str(tmp_path / "o")],
            env=cluster.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        assert "advertises the 'causal_gym_head' resource" in proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert not (tmp_path / "o").exists()
    finally:
        cluster.stop()
