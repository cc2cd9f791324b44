"""Both sandbox backends, real engines, no mocks: what the agent can and cannot do.

Docker tests run wherever an engine runs and fail (not skip) in CI without one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from causal_gym import generate_task, resolve_key
from orchestrator.sandbox import Sandbox, SandboxLimits, make_sandbox
from orchestrator.sandbox.conformance import CHECKS, check_output_cap
from tests.support.docker_env import require_docker

REPO = Path(__file__).resolve().parents[1]
SECRET = "d4" * 32


@pytest.fixture(scope="module")
def staged() -> dict[str, bytes]:
    return dict(generate_task("train:adjustment:4", resolve_key(environ={})).public.files)


@pytest.fixture(
    params=[
        pytest.param("local", marks=pytest.mark.sandbox),
        pytest.param("docker", marks=pytest.mark.docker),
    ]
)
def box(
    request: pytest.FixtureRequest, staged: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Sandbox]:
    monkeypatch.setenv("CAUSAL_GYM_KEY", SECRET)  # the host process holds a key
    image = require_docker() if request.param == "docker" else None
    sandbox = make_sandbox(request.param, SandboxLimits(memory_mb=1024, pids=128), image)
    sandbox.open(staged)
    try:
        yield sandbox
    finally:
        sandbox.close()


@pytest.mark.parametrize("check", list(CHECKS))
def test_the_backend_keeps_every_promise(box: Sandbox, check: str) -> None:
    """orchestrator.sandbox.conformance, one check at a time (check_backend runs them
    all on a fresh sandbox, the way a third-party backend is checked)."""
    CHECKS[check](box, SECRET)


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("local", marks=pytest.mark.sandbox),
        pytest.param("docker", marks=pytest.mark.docker),
    ],
)
def test_output_is_capped(kind: str) -> None:
    check_output_cap(kind, require_docker() if kind == "docker" else None)


def test_a_check_fails_when_a_promise_is_broken(tmp_path: Path) -> None:
    """The conformance checks can fail: a fake backend that runs commands on the host
    with no limits is refused by the first promise it breaks."""
    import subprocess as sp

    from orchestrator.errors import SandboxConformanceError
    from orchestrator.sandbox.base import ExecResult

    class HostShell:
        kind = "host"

        def exec(self, argv: object, timeout_s: float) -> ExecResult:
            env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
            done = sp.run(argv, shell=isinstance(argv, str), capture_output=True, text=True,
                          cwd=tmp_path, timeout=timeout_s, env=env)  # fmt: skip
            return ExecResult(done.returncode, done.stdout, done.stderr, False, False, 0.0)

    with pytest.raises(SandboxConformanceError, match="causal_gym imports inside the sandbox"):
        CHECKS["no_generator_and_no_key"](HostShell(), SECRET)  # type: ignore[arg-type]
    with pytest.raises(SandboxConformanceError, match=r"commands run as root|capabilities"):
        CHECKS["no_privileges"](HostShell(), SECRET)  # type: ignore[arg-type]


@pytest.mark.sandbox
def test_local_limits_are_the_configured_rlimits_and_no_process_survives_on_the_host() -> None:
    """What only the local backend can show: its per-process resource limits, its own
    uid when run as root, and no process of an exec left on the host at the deadline."""
    with make_sandbox("local", SandboxLimits(memory_mb=1024, pids=128)) as box:
        box.open({})
        uid = int(box.exec("id -u", 30).stdout)
        table = box.exec("cat /proc/self/limits", 7).stdout
        soft = {line[:26].strip(): line[26:47].strip() for line in table.splitlines()[1:] if line}
        assert soft["Max file size"] == str(512 * 1024 * 1024)  # SandboxLimits.file_mb
        assert soft["Max address space"] == str(1024 * 1024 * 1024)  # memory_mb=1024
        assert soft["Max processes"] == "128"
        assert soft["Max cpu time"] == "12"  # the 7 s deadline + 5
        assert uid >= 2_000_000 or os.geteuid() != 0  # its own uid when run as root
        tag = f"{uuid.uuid4().int % 10**6 + 10**6}"
        assert box.exec(f"sleep {tag} & sleep {tag}", 3).timed_out
        time.sleep(1)
    host = subprocess.run(["pgrep", "-f", f"sleep {tag}"], capture_output=True, text=True)
    assert host.stdout.strip() == "", "a sleep survived its deadline on the host"


@pytest.mark.sandbox
def test_file_size_limit_binds_locally() -> None:
    with make_sandbox("local", SandboxLimits(file_mb=8)) as sandbox:
        sandbox.open({})
        result = sandbox.exec("head -c 20000000 /dev/zero > big; echo rc=$?; wc -c < big", 30)
    rc, size = result.stdout.split()
    assert rc != "rc=0" and int(size) == 8 * 1024 * 1024


@pytest.mark.docker
def test_host_watchdog_takes_down_a_container_whose_timeout_is_stopped() -> None:
    """If even the in-container `timeout` is stopped, the host kills the container."""
    image = require_docker()
    with make_sandbox("docker", SandboxLimits(), image) as sandbox:
        sandbox.open({})
        started = time.monotonic()
        stop_timeout = (
            'for p in /proc/[0-9]*; do [ "$(cat $p/comm)" = timeout ] && kill -STOP ${p#/proc/}; '
            "done; sleep 600"
        )
        result = sandbox.exec(stop_timeout, 2)
        elapsed = time.monotonic() - started
        assert result.timed_out and result.exit_code is None
        assert elapsed < 2 + 2 + 5 + 10  # deadline + kill grace + watchdog + slack
        assert _container_state(sandbox) != "running"


def _container_state(sandbox: Sandbox) -> str:
    container = sandbox.container  # type: ignore[attr-defined]
    container.reload()
    return str(container.status)


@pytest.mark.docker
def test_docker_leaves_no_container(staged: dict[str, bytes]) -> None:
    image = require_docker()
    sandbox = make_sandbox("docker", SandboxLimits(), image)
    sandbox.open(staged)
    name = sandbox.container.name  # type: ignore[attr-defined]
    sandbox.exec("sleep 30 &", 5)
    sandbox.close()
    listed = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"name={name}", "-q"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert listed.stdout.strip() == ""


@pytest.mark.docker
def test_reaper_removes_containers_of_dead_runs(staged: dict[str, bytes]) -> None:
    image = require_docker()
    from orchestrator.sandbox.docker_backend import reap_containers
    from orchestrator.sandbox.docker_image import docker_client

    sandbox = make_sandbox("docker", SandboxLimits(), image, run_id="crashed-run")
    sandbox.open({})
    name = sandbox.container.name  # type: ignore[attr-defined]
    sandbox.container = None  # the owner "crashes" without closing
    removed = reap_containers(docker_client(), run_id="crashed-run")
    assert name in removed
    assert (
        subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True
        ).stdout.strip()
        == ""
    )
