"""Bad sandbox input: a clear error naming cause and fix, no hang, nothing left running."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.errors import SandboxUnavailableError
from orchestrator.sandbox import SandboxLimits, make_sandbox
from tests.support.cli import orchestrator_cli
from tests.support.docker_env import require_docker


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Through the real console script (the other CLI tests run in-process)."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("causal-gym-run")), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_bubblewrap_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailableError, match="apt-get install bubblewrap"):
        make_sandbox("local")


def test_docker_daemon_down_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    started = time.monotonic()
    box = make_sandbox("docker")
    with pytest.raises(SandboxUnavailableError, match="Docker daemon is not reachable"):
        box.open({})
    assert time.monotonic() - started < 30


@pytest.mark.docker
def test_unknown_image_names_the_fix() -> None:
    require_docker()
    box = make_sandbox("docker", SandboxLimits(), "causal-gym/no-such-image:0")
    with pytest.raises(SandboxUnavailableError, match=r"cannot be pulled.*--image"):
        box.open({})


def test_unknown_sandbox_kind() -> None:
    with pytest.raises(ValueError, match="accepted sandboxes are local, docker"):
        make_sandbox("vm")
    proc = cli("sandbox", "exec", "--sandbox", "vm", "--", "true")
    assert proc.returncode == 2 and "accepted sandboxes are local, docker" in proc.stderr


@pytest.mark.sandbox
def test_cli_exec_shows_what_the_agent_sees() -> None:
    proc = cli("sandbox", "exec", "--stage", "eval-v1:ate:2", "--", "ls")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["README.md", "data.csv"]
    summary = json.loads(proc.stderr.strip().splitlines()[-1])
    assert summary["exit_code"] == 0 and summary["sandbox"] == "local"


@pytest.mark.sandbox
def test_cli_exec_reports_a_missing_command_and_a_deadline() -> None:
    cli = orchestrator_cli
    missing = cli("sandbox", "exec", "--", "no-such-command-xyz")
    assert missing.returncode == 1
    assert json.loads(missing.stderr.strip().splitlines()[-1])["exit_code"] == 127
    started = time.monotonic()
    late = cli("sandbox", "exec", "--timeout", "2", "--", "sleep 60")
    assert late.returncode == 1 and time.monotonic() - started < 2 + 20
    assert json.loads(late.stderr.strip().splitlines()[-1])["timed_out"] is True
    bad_stage = cli("sandbox", "exec", "--stage", "train:nope:1", "--", "ls")
    assert bad_stage.returncode == 2 and "accepted families" in bad_stage.stderr
