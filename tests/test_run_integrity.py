"""What the runner believes and who can read what it writes, attacked the way the last
round's attacker worked: forged results lines, a user policy reading a sibling run, a
driver killed with SIGKILL. Real runs on an embedded Ray, one after another."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from orchestrator.records.layout import RESULTS_FILE
from orchestrator.records.read_back import REJECTED_FILE, read_records
from tests.support.ray_cluster import descends_from, process_environments

pytestmark = [
    pytest.mark.ray,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.xdist_group("ray"),
]
RUN = str(Path(sys.executable).with_name("causal-gym-run"))
SECRET_HEX = "3c" * 32
ARGS = ["--split", "eval-v1", "-n", "3", "--agent", "constant"]
ONE = ["--split", "eval-v1", "-n", "1"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RUN, *args], capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


def summary(out: Path) -> dict[str, object]:
    data = json.loads((out / "summary.json").read_text())
    keep = ("episodes", "attempts", "mean_reward", "mean_clipped_reward", "coverage", "by_family")
    return {k: data[k] for k in keep}


def test_forged_lines_are_refused_on_resume_and_the_report_is_the_untampered_one(
    tmp_path: Path,
) -> None:
    honest, other_run, other_key = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    key_file = tmp_path / "other.key"
    key_file.write_text("5e" * 32)
    for out, extra in ((honest, []), (other_run, []), (other_key, ["--key-file", str(key_file)])):
        done = run(*ARGS, *extra, "--out", str(out))
        assert done.returncode == 0, done.stderr
    untampered = summary(honest)
    genuine = (honest / RESULTS_FILE).read_text().splitlines()
    assert len(genuine) == 3
    # The attacker adds (dropping a genuine line is tests/test_shared_head.py's):
    first = json.loads(genuine[0])
    forged = [
        (other_run / RESULTS_FILE).read_text().splitlines()[2],  # that task, from another run
        (other_key / RESULTS_FILE).read_text().splitlines()[2],  # ... under another key
        json.dumps({**json.loads(genuine[2]), "attempt": 5}),  # a later attempt number
        json.dumps({**first, "reward": 1e308, "clipped_reward": 1e308}),  # a huge reward
        genuine[0],  # a genuine line, repeated
        genuine[1][: len(genuine[1]) // 2],  # a torn line
    ]
    (honest / RESULTS_FILE).write_text("\n".join([*genuine, *forged]) + "\n")
    resumed = run(*ARGS, "--out", str(honest), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "6 lines of results.jsonl refused" in resumed.stderr, resumed.stderr
    assert "3 done, 0 to run" in resumed.stderr
    assert summary(honest) == untampered  # the tampered lines changed nothing
    rejected = [json.loads(x) for x in (honest / REJECTED_FILE).read_text().splitlines()]
    assert [r["text"] for r in rejected] == forged  # kept aside whole, none deleted
    assert [r["reason"].split(":")[0] for r in rejected] == [
        "bad MAC", "bad MAC", "bad MAC", "bad MAC", "broken chain", "not JSON"
    ]  # fmt: skip
    final = [r for r in read_records(honest) if r.final]
    assert sorted(r.task_id for r in final) == sorted({r.task_id for r in final})
    assert len(final) == 3


PEEKER = """
from orchestrator.agents import AgentTurn, Policy, ToolCall
class Peeker(Policy):
    def next_turn(self, messages, deadline_s):
        found = []
        for path in TARGETS:
            try:
                with open(path, "rb") as handle:
                    found.append(f"READ {len(handle.read())} bytes of {path}")
            except OSError as exc:
                found.append(f"DENIED {type(exc).__name__} {path}")
        answer = '{"estimate": 0, "ci_lower": -1, "ci_upper": 1}'
        call = ToolCall("c0", "submit_answer", answer)
        return AgentTurn(text="; ".join(found), tool_calls=(call,))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a user policy runs under its own uid as root")
def test_a_user_policy_cannot_read_a_sibling_run(tmp_path: Path) -> None:
    """Run folders are 0700 with 0600 files, and the policy process has a private
    /tmp: a sibling run's results are out of reach wherever it lies."""
    places = [tmp_path, Path(tempfile.mkdtemp(prefix="sibling-", dir="/var/lib"))]
    try:
        siblings = [place / "sibling" for place in places]
        for sibling in siblings:
            done = run(*ONE, "--agent", "reference", "--out", str(sibling))
            assert done.returncode == 0, done.stderr
            assert sibling.stat().st_mode & 0o777 == 0o700
            assert {p.stat().st_mode & 0o777 for p in sibling.iterdir()} == {0o600}
        targets = [str(s / name) for s in siblings for name in (RESULTS_FILE, "run.json")]
        source = tmp_path / "peeker.py"
        source.write_text(f"TARGETS = {targets!r}\n" + PEEKER)
        out = tmp_path / "attacker"
        done = run(*ONE, "--agent", f"python:{source}:Peeker", "--out", str(out))
        assert done.returncode == 0, done.stderr
        said = json.loads((out / "transcripts.jsonl").read_text().splitlines()[0])["messages"]
        notes = next(m["content"] for m in said if m["role"] == "assistant")
        assert notes.count("DENIED") == len(targets) and "READ" not in notes, notes
        # and under another uid without any namespace: the modes alone keep it out
        for target in targets:
            peek = subprocess.run(
                ["setpriv", "--reuid=3999999", "--regid=3999999", "--clear-groups", "cat", target],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert peek.returncode != 0 and "Permission denied" in peek.stderr
    finally:
        shutil.rmtree(places[1], ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _started(pid: int) -> str | None:
    """The process's start time (a pid and its start time name one process)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return None


def test_kill_9_of_a_secret_key_run_then_reap_leaves_no_key_and_no_process(
    tmp_path: Path, private_tmp: Path
) -> None:
    out = tmp_path / "run"
    state = private_tmp / "state"
    # no other test's reaper takes what it leaves
    temp = {"TMPDIR": str(private_tmp), "CAUSAL_GYM_STATE_DIR": str(state)}
    driver = subprocess.Popen(
        [RUN, "--split", "eval-v1", "-n", "12", "--agent", "simulated:1:3", "--out", str(out)],
        env={**os.environ, "CAUSAL_GYM_KEY": SECRET_HEX, **temp},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (out / RESULTS_FILE).exists():
        time.sleep(0.5)
    time.sleep(2)
    marker = next((state / "ray").glob(f"{driver.pid}.*.json"))
    noted = json.loads(marker.read_text())
    # the processes the run started: Ray's, its actors, their sandboxes
    ours = [pid for pid in process_environments() if descends_from(pid, driver.pid)]
    assert len(ours) >= 8  # gcs, raylet, monitors, agents, generator, scorer, actors
    started = {pid: _started(pid) for pid in ours}
    driver.kill()  # SIGKILL of the driver alone, as the attacker did
    driver.wait(timeout=30)
    time.sleep(3)
    # Freeze what outlived the driver, so that only the reap can end it: a worker still
    # shutting down after 3 s on a busy machine would otherwise exit between this list
    # and the reap, which would then rightly not report it. What was already exiting
    # is gone or a zombie half a second later.
    for pid in ours:
        if _started(pid) == started[pid]:  # not a new process under a reused pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
    time.sleep(0.5)
    survivors = [pid for pid in ours if _alive(pid) and _started(pid) == started[pid]]
    assert survivors, "nothing outlived the driver: the check below would be vacuous"
    keys = list((state / "keys").glob(f"causal-gym-key-{driver.pid}.*"))
    assert keys  # SIGKILL left its key folder
    try:
        reap = run("sandbox", "reap", env=temp)
        assert reap.returncode == 0, reap.stderr
        report = json.loads(reap.stdout)
        assert set(report["ray_processes"]) >= set(survivors)
        assert not [pid for pid in ours if _alive(pid)]
    finally:  # a failed reap must not leave stopped processes behind
        for pid in survivors:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert not any(k.exists() for k in keys) and not marker.exists()
    # nothing the run left (its folder, Ray's session, our temporary files) holds the key
    assert Path(noted["session_dir"]).is_relative_to(private_tmp)
    places = [out, private_tmp, *Path(tempfile.gettempdir()).glob("causal-gym*")]
    scanned = 0
    for place in places:
        for path in [place, *place.rglob("*")] if place.is_dir() else [place]:
            if path.is_file() and not path.is_symlink():
                assert SECRET_HEX.encode() not in path.read_bytes(), path
                scanned += 1
    assert scanned > 10
