"""Bad input to the runner: one line naming what was wrong and what is accepted, exit 2,
before any work (no run folder, no Ray), for every way a config, a flag or an agent can
be wrong; and a connect that cannot succeed ends within its timeout."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import orchestrator_cli

pytestmark = pytest.mark.sandbox  # a python: agent is loaded in bubblewrap to check it


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word (not a Ray GCS)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def test_bad_input_is_one_line_before_any_work(tmp_path: Path) -> None:
    def config(name: str, body: bytes) -> str:
        path = tmp_path / name
        path.write_bytes(body)
        return str(path)

    held = tmp_path / "held"
    held.mkdir()
    (held / "run.json").write_text('{"run_id": "x"}')
    no_policy = config("no_policy.py", b"x = 1\n")
    exits = config("exits.py", b"raise SystemExit(3)\n")
    huge = config("huge.toml", b"# " + b"x" * (1 << 20) + b"\n")
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # nobody writes it: reading would block forever
    cases = [
        (["--config", "/dev/zero"], "config /dev/zero is not a regular file"),
        (["--config", str(fifo)], "is not a regular file"),
        (["--config", huge], "a config is at most 1048576 bytes"),
        (["--config", str(tmp_path)], "is not a regular file"),
        (
            ["--split", "eval-v4", "-n", "1"],
            "split: Input should be 'train', 'eval-v1', 'eval-v2', 'eval-expert-v1', "
            "'eval-v3' or 'eval-real-v1'",
        ),
        (["--split", "eval-v2", "-n", "451"], "more than eval-v2 holds"),
        (["--split", "eval-v1", "-n", "501"], "more than eval-v1 holds"),
        (["--split", "train"], "the train split is unbounded: give -n"),
        (
            ["--config", config("unknown.toml", b'split = "eval-v1"\nflavour = "vanilla"\n')],
            "flavour: unknown key (accepted: address, agent,",
        ),
        (
            ["--config", config("nested.toml", b"[limits]\nzork = 1\n")],
            "limits.zork: unknown key (accepted: cpus, disk_mb, file_mb, memory_mb, output_bytes",
        ),
        (
            ["--config", config("type.toml", b'n = "three"\n')],
            "n: Input should be a valid integer, unable to parse string as an integer, got str",
        ),
        (
            ["--config", config("type2.toml", b"[retries]\ntimeout = 2\n")],
            "retries.timeout: Input should be less than or equal to 1",
        ),
        (
            ["--config", config("budget.toml", b"tool_output_chars = 10\n")],
            "tool_output_chars: Input should be greater than or equal to 256",
        ),
        (["--config", config("latin1.toml", b"split = 'caf\xe9'\n")], "is not UTF-8 text"),
        (["--config", config("nottoml.toml", b"split = = 1\n")], "is not valid TOML"),
        (["--config", str(tmp_path / "absent.toml")], "cannot read config"),
        (["-n", "1", "--address", "127.0.0.1:1"], "cannot reach a Ray cluster at 127.0.0.1:1"),
        (["-n", "1", "--out", str(held)], "is not a causal-gym run file"),
        (["-n", "1", "--timeout", "inf"], "--timeout must be a number of seconds"),
        (["-n", "1", "--connect-timeout", "0"], "--connect-timeout must be a number of seconds"),
        (["-n", "three"], "Invalid value for '-n': Input should be a valid integer"),
        (["--bogus"], "No such option: --bogus"),
        (["-n", "1", "--agent", "gpt"], "unknown agent 'gpt': accepted agents are openai"),
        (["-n", "1", "--agent", "python:/nonexistent.py:X"], "no Python file at"),
        (["-n", "1", "--agent", f"python:{no_policy}:X"], "is not a subclass of"),
        (["-n", "1", "--agent", f"python:{exits}:X"], "SystemExit: 3"),
        (["-n", "1", "--agent", "python:no_such_module_here:X"], "No module named"),
    ]
    for args, fragment in cases:
        proc = (
            orchestrator_cli(*args, "--out", str(tmp_path / "fresh"))
            if "--out" not in args
            else orchestrator_cli(*args)
        )
        assert proc.returncode == 2, (args, proc.stderr)
        assert fragment in proc.stderr, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert not (tmp_path / "fresh").exists()


def test_other_commands_refuse_bad_input_in_one_line(tmp_path: Path) -> None:
    """`export` of a folder whose run.json is junk, and `sandbox reap` of a run id that
    is a path: one line, exit 2, nothing written."""
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "run.json").write_text("{not a run")
    for args, fragment in (
        (["export", str(junk), "--format", "inspect"], "is not a causal-gym run file"),
        (["sandbox", "reap", "--run-id", "../../etc"], "is not a run id"),
        (["sandbox", "reap", "--run-id", ""], "is not a run id"),
    ):
        proc = orchestrator_cli(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert fragment in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert sorted(p.name for p in junk.iterdir()) == ["run.json"]


def test_baselines_bad_input_is_one_line_and_every_agent_is_checked_first(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[run]\nsplit = "eval-v1"\nn = 1\n[[agents]]\nagent = "constant"\n'
                   '[[agents]]\nagent = "python:/nonexistent.py:X"\n')  # fmt: skip
    out = tmp_path / "baselines"
    proc = orchestrator_cli("baselines", "--config", str(bad), "--out", str(out))
    assert proc.returncode == 2 and "no Python file at" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert not out.exists()  # the first agent did not run
    typed = tmp_path / "typed.toml"
    typed.write_text('[[agents]]\nagent = "constant"\nn = "three"\n')
    proc = orchestrator_cli("baselines", "--config", str(typed), "--out", str(out))
    assert proc.returncode == 2 and "agents.0.n: Input should be a valid integer" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_run_at_a_silent_address_ends_within_its_connect_timeout(
    tmp_path: Path, silent_port: int
) -> None:
    started = time.monotonic()
    proc = orchestrator_cli(
        "-n", "1", "--address", f"127.0.0.1:{silent_port}", "--connect-timeout", "5",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert proc.returncode == 2 and "no Ray cluster answered" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1
    assert time.monotonic() - started < 5 + 5
    assert not (tmp_path / "run").exists()


CLIENT = """
import sys, time
from orchestrator.stream.client import StreamClient, StreamError
print("ready", flush=True)
started = time.monotonic()
limit = float(sys.argv[2])
try:
    StreamClient(sys.argv[1], "cgs_c_x", connect_timeout_s=limit, timeout_s=limit).pull_tasks(1)
except StreamError as exc:
    print("StreamError", round(time.monotonic() - started, 1), str(exc), flush=True)
"""


@pytest.mark.parametrize("where", ["nothing listens", "a silent port"])
def test_a_stream_client_returns_within_its_connect_timeout(where: str, silent_port: int) -> None:
    port = 1 if where == "nothing listens" else silent_port
    address = f"http://127.0.0.1:{port}"
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, address, "4"], capture_output=True, text=True, timeout=60
    )
    kind, seconds, *_ = done.stdout.splitlines()[1].split(" ", 2)
    assert kind == "StreamError" and float(seconds) < 4 + 2, done.stdout


def test_a_connecting_stream_client_answers_sigterm(silent_port: int) -> None:
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, f"http://127.0.0.1:{silent_port}", "300"],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert client.stdout is not None and client.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # inside the connect now
        client.send_signal(signal.SIGTERM)
        assert client.wait(timeout=15) == -signal.SIGTERM
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait()


def test_a_connecting_run_answers_sigterm_and_leaves_no_probe(
    tmp_path: Path, silent_port: int
) -> None:
    run = str(Path(sys.executable).with_name("causal-gym-run"))
    driver = subprocess.Popen(
        [run, "-n", "1", "--address", f"127.0.0.1:{silent_port}", "--connect-timeout", "300",
         "--out", str(tmp_path / "run")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    mark = f"127.0.0.1:{silent_port}".encode()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(probes(mark)) < 2:  # the runner, its probe
            time.sleep(0.2)
        assert len(probes(mark)) >= 2
        driver.send_signal(signal.SIGTERM)
        _, stderr = driver.communicate(timeout=30)
        assert driver.returncode == 130 and "interrupted" in stderr, stderr
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and probes(mark):
            time.sleep(0.2)
        assert not probes(mark)
        assert not (tmp_path / "run").exists()
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()


def probes(mark: bytes) -> list[int]:
    """Live processes whose command line names `mark`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
                found += [int(entry.name)] if state != "Z" else []
        except OSError:
            continue
    return found
