"""Both sandbox backends, real engines, no mocks: what the agent can and cannot do.

Docker tests run wherever an engine runs and fail (not skip) in CI without one.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from causal_gym import generate_task, resolve_key
from orchestrator.errors import SandboxPathError
from orchestrator.sandbox import Sandbox, SandboxLimits, make_sandbox
from tests.support.docker_env import require_docker
from tests.support.network import HostListener, probe_code, probe_from_host

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


def test_no_network_not_even_to_this_host(box: Sandbox) -> None:
    with HostListener() as listener:
        targets = listener.targets()
        control = probe_from_host(targets)
        assert set(control.values()) == {"connected"}, control  # the probe can succeed
        before = listener.accepted
        inside = box.exec(["python", "-c", probe_code(targets)], 60)
        assert inside.exit_code == 0, inside.stderr
        seen = json.loads(inside.stdout)
        assert listener.accepted == before, "a sandboxed process reached the host listener"
    assert seen["127.0.0.1"] == "ECONNREFUSED"  # its own empty loopback, not the host's
    assert {seen[host] for host, _ in targets[1:]} == {"ENETUNREACH"}, seen
    dns = box.exec("python -c 'import socket; socket.getaddrinfo(\"pypi.org\", 443)'", 30)
    assert dns.exit_code == 1 and "gaierror" in dns.stderr


def test_no_generator_package_and_no_key(box: Sandbox) -> None:
    imported = box.exec("python -c 'import causal_gym'", 30)
    assert imported.exit_code == 1 and "No module named 'causal_gym'" in imported.stderr
    for module in ("ray", "verifiers", "orchestrator"):
        assert box.exec(f"python -c 'import {module}'", 30).exit_code == 1, module
    env = box.exec("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'", 30)
    assert "CAUSAL_GYM_KEY" not in env.stdout and SECRET not in env.stdout


def test_host_paths_are_not_readable(box: Sandbox, tmp_path: Path) -> None:
    marker = Path.home() / f".causal-gym-marker-{uuid.uuid4().hex[:8]}"
    marker.write_text("host secret\n")
    try:
        probe = box.exec(
            f"cat {marker} {REPO}/pyproject.toml /root/.bashrc 2>&1; "
            "cat /proc/1/environ | tr '\\0' '\\n'; ls /work 2>&1; echo done",
            30,
        )
    finally:
        marker.unlink()
    assert "host secret" not in probe.stdout
    assert "[build-system]" not in probe.stdout  # the project checkout is not visible
    assert SECRET not in probe.stdout and "done" in probe.stdout


def test_analyst_toolchain_fits_ols_on_the_staged_data(box: Sandbox) -> None:
    script = (
        "import pandas as pd, statsmodels.api as sm, sklearn; "
        "d = pd.read_csv('data.csv').select_dtypes('number').dropna(); "
        "y, X = d.iloc[:, 0], sm.add_constant(d.iloc[:, 1:]); "
        "print('params', len(sm.OLS(y, X).fit().params))"
    )
    result = box.exec(["python", "-c", script], 120)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("params ")


def test_files_written_by_the_agent_reach_the_host(box: Sandbox) -> None:
    result = box.exec("mkdir -p out && echo '{\"estimate\": 1.5}' > out/answer.json", 30)
    assert result.ok, result.stderr
    assert box.read_file("out/answer.json") == b'{"estimate": 1.5}\n'
    assert box.read_file("/workspace/README.md").startswith(b"# ")
    box.write_file("notes/host.txt", b"from host\n")
    assert box.exec("cat notes/host.txt", 30).stdout == "from host\n"
    box.exec("ln -s /etc/passwd leak", 30)
    with pytest.raises(SandboxPathError):
        box.read_file("leak")
    with pytest.raises(SandboxPathError):
        box.read_file("../etc/passwd")


def test_only_workspace_is_writable(box: Sandbox) -> None:
    result = box.exec(
        "touch /usr/owned 2>&1; touch /opt/analyst/owned 2>&1; echo ok > /workspace/w", 30
    )
    assert "owned" not in box.exec("ls /usr /opt/analyst", 30).stdout
    assert box.read_file("w") == b"ok\n" and result.exit_code == 0


def test_fork_bomb_is_contained(box: Sandbox) -> None:
    started = time.monotonic()
    result = box.exec("bomb() { bomb | bomb & }; bomb; sleep 2", 15)
    assert time.monotonic() - started < 15 + 5
    after = box.exec("echo alive; ls -d /proc/[0-9]* | wc -l", 30)  # still usable
    alive, processes = after.stdout.split()
    assert alive == "alive"
    assert int(processes) < 10, "fork bomb processes outlived their exec"
    assert result.duration_s < 15 + 5


def test_memory_hog_is_contained(box: Sandbox) -> None:
    result = box.exec("python -c 'x = bytearray(6 * 1024 ** 3); print(len(x))'", 60)
    assert "6442450944" not in result.stdout
    # refused by the address-space limit (local) or killed by the memory cgroup (docker)
    assert "MemoryError" in result.stderr or result.exit_code == 137, result
    assert box.exec("echo alive", 30).stdout == "alive\n"


def test_limits_are_applied_inside(box: Sandbox) -> None:
    """What the sandbox promises, read from inside: no root, no capabilities, no new
    privileges, and (local) the per-process resource limits."""
    status = box.exec("id -u; grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/self/status", 30)
    uid, *caps = status.stdout.splitlines()
    assert int(uid) != 0
    assert "CapEff:\t0000000000000000" in caps and "CapPrm:\t0000000000000000" in caps
    assert "NoNewPrivs:\t1" in caps
    if box.kind == "local":
        table = box.exec("cat /proc/self/limits", 7).stdout
        soft = {line[:26].strip(): line[26:47].strip() for line in table.splitlines()[1:] if line}
        assert soft["Max file size"] == str(512 * 1024 * 1024)  # SandboxLimits.file_mb
        assert soft["Max address space"] == str(1024 * 1024 * 1024)  # memory_mb=1024
        assert soft["Max processes"] == "128"
        assert soft["Max cpu time"] == "12"  # the 7 s deadline + 5
        assert int(uid) >= 2_000_000 or os.geteuid() != 0  # its own uid when run as root


def test_process_limit_binds(box: Sandbox) -> None:
    spawn = (
        "import subprocess\n"
        "children = []\n"
        "try:\n"
        "    for _ in range(400):\n"
        "        children.append(subprocess.Popen(['sleep', '30']))\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
        "print('started', len(children))\n"
        "for child in children:\n"
        "    child.kill()\n"
    )
    result = box.exec(["python", "-c", spawn], 30)
    lines = result.stdout.splitlines()
    assert lines[0] == "refused 11", result  # EAGAIN: the pids limit (128) is reached
    assert 64 < int(lines[1].split()[1]) < 128


def test_deadline_kills_everything(box: Sandbox) -> None:
    tag = f"{uuid.uuid4().int % 10**6 + 10**6}"
    started = time.monotonic()
    result = box.exec(f"sleep {tag} & sleep {tag}", 3)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None
    assert elapsed < 3 + 5
    time.sleep(1)
    host = subprocess.run(["pgrep", "-f", f"sleep {tag}"], capture_output=True, text=True)
    if box.kind == "local":
        assert host.stdout.strip() == "", "a sleep survived its deadline on the host"
    inside = box.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '", 30)
    assert "cat" in inside.stdout and f"sleep {tag}" not in inside.stdout


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("local", marks=pytest.mark.sandbox),
        pytest.param("docker", marks=pytest.mark.docker),
    ],
)
def test_output_is_capped(kind: str) -> None:
    image = require_docker() if kind == "docker" else None
    with make_sandbox(kind, SandboxLimits(output_bytes=1000), image) as sandbox:
        sandbox.open({})
        result = sandbox.exec("yes | head -c 100000; yes no | head -c 5000 >&2", 30)
    assert len(result.stdout) == 1000 and result.truncated
    assert result.stdout == "y\n" * 500 and len(result.stderr) == 1000


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
