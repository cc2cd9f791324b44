"""What a runner killed with SIGKILL leaves behind, and the one place that removes it.

A runner cleans up in its `finally` blocks; SIGKILL skips them. What then survives:

- its key folder (head_key.py): a 0600 copy of the key, until someone removes it;
- its embedded Ray instance: gcs_server, raylet and the workers die with the driver
  (Ray ties their fate to it), but Ray's DashboardAgent and RuntimeEnvAgent are
  re-parented to pid 1 and linger until their own health checks give up (measured on
  this machine: from seconds to about two minutes; after a SIGKILL of gcs_server and
  raylet as well they did not go away at all);
- local sandboxes (workspace with the staged data, tmpfs mount, cgroups) and Docker
  containers, both labelled with their owner.

Everything here is marked with its owner (`owners.py`): the key folder by its name, an
embedded Ray instance by a marker file written right after it starts (its session
directory and node id), sandboxes and containers by their ids and labels. `reap_dead_runs`
removes what belongs to owners that are gone and never touches a live one. Every run
calls it before it starts, and `causal-gym-run sandbox reap` calls it on demand.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from orchestrator.owners import owner_alive, owner_token

RAY_MARKER_PREFIX = "causal-gym-ray-"


def _marker_dir() -> Path:
    return Path(tempfile.gettempdir())


def note_embedded_ray(session_dir: str, node_id: str) -> Path:
    """Record the embedded Ray instance this process started (0600, named after it)."""
    path = _marker_dir() / f"{RAY_MARKER_PREFIX}{owner_token()}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"session_dir": session_dir, "node_id": node_id}, handle)
    return path


def forget_embedded_ray(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _belongs(pid: int, session_dir: str, node_id: str) -> bool:
    """Whether process `pid` is part of that Ray instance: its command line names the
    session directory (gcs_server, raylet, the monitors), its environment names the
    node (workers), or it is titled ray::... and holds a file open in the session
    directory (the dashboard and runtime-env agents: their titles hide their arguments,
    their environment names no node, and they are the ones that outlive a SIGKILLed
    driver)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    if session_dir.encode() in cmdline:
        return True
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    if f"RAY_NODE_ID={node_id}".encode() in environ:
        return True
    # titled ray::..., so a user's `tail -f` of the session's logs is never taken
    return cmdline.startswith(b"ray::") and _holds_file_in(
        pid, os.path.realpath(session_dir) + os.sep
    )


def _holds_file_in(pid: int, folder: str) -> bool:
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            if os.readlink(descriptor).startswith(folder):
                return True
    return False


def _processes_of(session_dir: str, node_id: str) -> list[int]:
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        pid = int(entry.name) if entry.name.isdigit() else me
        if pid != me and _belongs(pid, session_dir, node_id):
            found.append(pid)
    return found


def reap_ray_instances(patience_s: float = 10.0) -> list[int]:
    """SIGKILL every process of an embedded Ray instance whose runner is gone; returns
    their pids. Markers of live runners are left alone."""
    killed: list[int] = []
    for marker in _marker_dir().glob(f"{RAY_MARKER_PREFIX}*.json"):
        token = marker.name[len(RAY_MARKER_PREFIX) :].removesuffix(".json")
        if marker.is_symlink() or owner_alive(token):
            continue
        try:
            noted: dict[str, Any] = json.loads(marker.read_text())
            session_dir, node_id = str(noted["session_dir"]), str(noted["node_id"])
        except (OSError, ValueError, KeyError, TypeError):
            forget_embedded_ray(marker)
            continue
        pids = _processes_of(session_dir, node_id) if session_dir and node_id else []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + patience_s
        while time.monotonic() < deadline and any(_running(pid) for pid in pids):
            time.sleep(0.05)
        killed += pids
        forget_embedded_ray(marker)
    return killed


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed child of pid 1 is reaped by init soon after)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def reap_dead_runs(run_id: str | None = None, docker: bool = True) -> dict[str, Any]:
    """Remove everything runners that are gone left behind; returns what was removed
    (Docker is skipped, with the reason, when no daemon answers)."""
    from orchestrator.errors import OrchestratorError
    from orchestrator.run.head_key import reap_key_folders
    from orchestrator.sandbox.registry import backend, backend_names, load

    report: dict[str, Any] = {
        "key_folders": [str(p) for p in reap_key_folders()],
        "ray_processes": reap_ray_instances(),
    }
    for name in backend_names():  # every backend's leftovers, in registration order
        if name == "docker" and not docker:
            continue
        try:
            report[name] = load(backend(name).reap)(run_id)
        except (OrchestratorError, ImportError) as exc:
            report[name] = f"skipped: {str(exc).split(':')[0]}"
    return report
