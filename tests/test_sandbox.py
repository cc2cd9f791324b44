"""Both sandbox backends, real engines, no mocks: what the agent can and cannot do.

Docker tests run wherever an engine runs and fail (not skip) in CI without one.
"""

from __future__ import annotations

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

REPO = Path(__file__).resolve().parents[1]
SECRET = "d4" * 32


@pytest.fixture(scope="module")
def staged() -> dict[str, bytes]:
    return dict(generate_task("train:adjustment:4", resolve_key(environ={})).public.files)


@pytest.fixture(params=["local", "docker"])
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


def test_no_network(box: Sandbox) -> None:
    tcp = box.exec("python -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 3)'", 30)
    assert tcp.exit_code not in (0, None)
    dns = box.exec("python -c 'import socket; socket.getaddrinfo(\"pypi.org\", 443)'", 30)
    assert dns.exit_code not in (0, None) and "gaierror" in dns.stderr


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
    assert result.exit_code not in (0, None)
    assert "6442450944" not in result.stdout


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


def test_output_is_capped() -> None:
    with make_sandbox("local", SandboxLimits(output_bytes=1000)) as sandbox:
        sandbox.open({})
        result = sandbox.exec("yes | head -c 100000", 30)
    assert len(result.stdout) == 1000 and result.truncated


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
