"""What every sandbox backend promises, as checks any backend can be run through.

`check_backend(name)` opens a fresh sandbox of a registered backend (registry.py) on a
real staged task and runs every check in CHECKS against the real engine; each failure
is a SandboxConformanceError naming the check. The built-in backends pass it in
tests/test_sandbox.py; a third-party backend imports this module and does the same.

The promises: no network (not even to this host), no generator package and no key,
no host path readable, the analyst toolchain present, workspace files that reach the
host and host files that reach the workspace (never through a link out of it), only
/workspace writable, no root and no capabilities, fork bombs, memory hogs and
process floods contained, every process gone at an exec's deadline, captured output
capped. Engine-specific promises (a local sandbox's rlimits, Docker's leftover
containers) stay with their backends' tests.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from orchestrator.errors import SandboxConformanceError, SandboxPathError
from orchestrator.sandbox.base import Sandbox, SandboxLimits
from orchestrator.sandbox.netprobe import HostListener, probe_code, probe_from_host
from orchestrator.sandbox.registry import make_sandbox

#: What check_backend gives the sandbox it checks (the process limit check counts on
#: pids=128).
LIMITS = SandboxLimits(memory_mb=1024, pids=128)
#: A key the host process holds while the checks run (none may reach the sandbox).
HOST_KEY_VAR = "CAUSAL_GYM_KEY"


def _expect(ok: bool, what: str) -> None:
    if not ok:
        raise SandboxConformanceError(what)


def no_network(box: Sandbox, secret: str) -> None:
    """No network: from inside, nothing reaches a listener on this host's addresses and
    no name resolves."""
    with HostListener() as listener:
        targets = listener.targets()
        control = probe_from_host(targets)
        _expect(set(control.values()) == {"connected"}, f"the host's own probe failed: {control}")
        before = listener.reached(len(targets))
        inside = box.exec(["python", "-c", probe_code(targets)], 60)
        _expect(inside.exit_code == 0, f"the network probe did not run: {inside.stderr[-300:]}")
        seen = json.loads(inside.stdout)
        _expect(listener.settled() == before, "a sandboxed process reached the host listener")
    _expect(all(v != "connected" for v in seen.values()), f"a connection was made: {seen}")
    dns = box.exec("python -c 'import socket; socket.getaddrinfo(\"pypi.org\", 443)'", 30)
    _expect(dns.exit_code != 0, "a name resolved inside the sandbox")


def no_generator_and_no_key(box: Sandbox, secret: str) -> None:
    """No generator and no key: causal_gym, ray, verifiers and orchestrator do not
    import, and the host's key is in no process's environment."""
    for module in ("causal_gym", "ray", "verifiers", "orchestrator"):
        imported = box.exec(f"python -c 'import {module}'", 30)
        _expect(imported.exit_code != 0, f"{module} imports inside the sandbox")
    env = box.exec("env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'", 30)
    _expect(HOST_KEY_VAR not in env.stdout and secret not in env.stdout, "the key is inside")


def no_host_paths(box: Sandbox, secret: str) -> None:
    """No host path readable: neither a fresh file in the host's home nor root's files,
    and the key not through /proc either."""
    marker = Path.home() / f".causal-gym-marker-{uuid.uuid4().hex[:8]}"
    marker.write_text("host secret\n")
    try:
        probe = box.exec(
            f"cat {marker} /root/.bashrc 2>&1; cat /proc/1/environ | tr '\\0' '\\n'; echo done",
            30,
        )
    finally:
        marker.unlink()
    _expect("done" in probe.stdout, f"the probe did not run: {probe.stderr[-300:]}")
    _expect("host secret" not in probe.stdout, "a file in the host's home is readable")
    _expect(secret not in probe.stdout, "the key is readable")


def analyst_toolchain(box: Sandbox, secret: str) -> None:
    """The analyst toolchain present: pandas, statsmodels and scikit-learn fit an OLS on
    the staged data.csv."""
    script = (
        "import pandas as pd, statsmodels.api as sm, sklearn; "
        "d = pd.read_csv('data.csv').select_dtypes('number').dropna(); "
        "y, X = d.iloc[:, 0], sm.add_constant(d.iloc[:, 1:]); "
        "print('params', len(sm.OLS(y, X).fit().params))"
    )
    result = box.exec(["python", "-c", script], 120)
    _expect(result.exit_code == 0 and result.stdout.startswith("params "), "no analyst toolchain")


def workspace_files(box: Sandbox, secret: str) -> None:
    """Workspace files that reach the host and host files that reach the workspace,
    never through a link or a path out of it."""
    result = box.exec("mkdir -p out && echo '{\"estimate\": 1.5}' > out/answer.json", 30)
    _expect(result.ok, "cannot write in /workspace")
    _expect(box.read_file("out/answer.json") == b'{"estimate": 1.5}\n', "a file did not reach")
    _expect(box.read_file("/workspace/README.md").startswith(b"# "), "README.md is not staged")
    box.write_file("notes/host.txt", b"from host\n")
    _expect(box.exec("cat notes/host.txt", 30).stdout == "from host\n", "a host file is missing")
    box.exec("ln -s /etc/passwd leak", 30)
    for path in ("leak", "../etc/passwd"):
        try:
            box.read_file(path)
        except SandboxPathError:
            continue
        raise SandboxConformanceError(f"read_file({path!r}) left the workspace")


def only_workspace_writable(box: Sandbox, secret: str) -> None:
    """Only /workspace writable: /usr, /opt and /etc are not."""
    box.exec("touch /usr/owned /opt/owned /etc/owned 2>/dev/null; echo ok > /workspace/w", 30)
    listed = box.exec("ls /usr /opt /etc", 30).stdout
    _expect("owned" not in listed, "a path outside /workspace is writable")
    _expect(box.read_file("w") == b"ok\n", "/workspace is not writable")


def no_privileges(box: Sandbox, secret: str) -> None:
    """No root and no capabilities: another uid, empty effective and permitted sets, and
    no_new_privs."""
    status = box.exec("id -u; grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/self/status", 30)
    uid, *caps = status.stdout.splitlines()
    _expect(int(uid) != 0, "commands run as root")
    _expect("CapEff:\t0000000000000000" in caps, f"effective capabilities: {caps}")
    _expect("CapPrm:\t0000000000000000" in caps, f"permitted capabilities: {caps}")
    _expect("NoNewPrivs:\t1" in caps, "a command could gain privileges")


def fork_bomb(box: Sandbox, secret: str) -> None:
    """A fork bomb contained: the exec ends near its deadline, the sandbox lives on, and
    no bomb process outlives the exec."""
    started = time.monotonic()
    result = box.exec("bomb() { bomb | bomb & }; bomb; sleep 2", 15)
    _expect(time.monotonic() - started < 20 and result.duration_s < 20, "the bomb held the exec")
    after = box.exec("echo alive; ls -d /proc/[0-9]* | wc -l", 30)
    alive, processes = after.stdout.split()
    _expect(alive == "alive", "the sandbox did not survive a fork bomb")
    _expect(int(processes) < 10, f"{processes} processes outlived their exec")


def memory_hog(box: Sandbox, secret: str) -> None:
    """A memory hog contained: 6 GiB cannot be had under a 1 GiB limit, and the sandbox
    survives the try."""
    result = box.exec("python -c 'x = bytearray(6 * 1024 ** 3); print(len(x))'", 60)
    _expect("6442450944" not in result.stdout, "6 GiB were allocated under a 1 GiB limit")
    _expect(box.exec("echo alive", 30).stdout == "alive\n", "the sandbox died of a memory hog")


def process_limit(box: Sandbox, secret: str) -> None:
    """A process flood contained: 400 children are refused (EAGAIN) before the pids limit."""
    spawn = (
        "import subprocess\nchildren = []\ntry:\n    for _ in range(400):\n"
        "        children.append(subprocess.Popen(['sleep', '30']))\n"
        "except OSError as exc:\n    print('refused', exc.errno)\n"
        "print('started', len(children))\nfor child in children:\n    child.kill()\n"
    )
    lines = box.exec(["python", "-c", spawn], 30).stdout.splitlines()
    _expect(bool(lines) and lines[0] == "refused 11", f"400 processes were allowed: {lines}")
    _expect(int(lines[-1].split()[1]) < LIMITS.pids, "more processes than the limit started")


def deadline(box: Sandbox, secret: str) -> None:
    """Every process gone at an exec's deadline, those in the background included."""
    tag = f"{uuid.uuid4().int % 10**6 + 10**6}"
    started = time.monotonic()
    result = box.exec(f"sleep {tag} & sleep {tag}", 3)
    _expect(result.timed_out and result.exit_code is None, "the deadline did not stop the exec")
    _expect(time.monotonic() - started < 3 + 5, "the exec outlived its deadline by > 5 s")
    time.sleep(1)
    inside = box.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '", 30)
    _expect(f"sleep {tag}" not in inside.stdout, "a process outlived its exec's deadline")


#: Every check, by name (each takes an open sandbox and the key the host holds).
CHECKS: dict[str, Callable[[Sandbox, str], None]] = {
    check.__name__: check
    for check in (
        no_network, no_generator_and_no_key, no_host_paths, analyst_toolchain,
        workspace_files, only_workspace_writable, no_privileges, fork_bomb, memory_hog,
        process_limit, deadline,
    )
}  # fmt: skip


def check_output_cap(name: str, image: str | None = None) -> None:
    """Captured output stops at the limit, on both streams, and says it was cut."""
    with make_sandbox(name, SandboxLimits(output_bytes=1000), image) as box:
        box.open({})
        result = box.exec("yes | head -c 100000; yes no | head -c 5000 >&2", 30)
    _expect(len(result.stdout) == 1000 and result.truncated, "stdout is not capped")
    _expect(result.stdout == "y\n" * 500 and len(result.stderr) == 1000, "stderr is not capped")


def check_backend(
    name: str, files: dict[str, bytes], image: str | None = None, secret: str | None = None
) -> None:
    """Run every check on a fresh sandbox of backend `name` with `files` staged (a
    task's data.csv and README.md) while this process holds a key in its environment;
    return None when the backend keeps every promise."""
    secret = secret or uuid.uuid4().hex * 2
    previous = os.environ.get(HOST_KEY_VAR)
    os.environ[HOST_KEY_VAR] = secret
    try:
        box = make_sandbox(name, LIMITS, image)
        box.open(files)
        try:
            for check in CHECKS.values():
                check(box, secret)
        finally:
            box.close()
        check_output_cap(name, image)
    finally:
        if previous is None:
            os.environ.pop(HOST_KEY_VAR, None)
        else:
            os.environ[HOST_KEY_VAR] = previous
