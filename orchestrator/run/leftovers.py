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

Everything here is marked with its owner (`owners.py`) and kept in the caller's private
state folder (private_state.py: 0700, checked, never a world-writable place): the key
folder by its name, an embedded Ray instance by a marker written right after it starts,
sandboxes by their ids. `reap_dead_runs` removes what belongs to owners that are gone
and never touches a live one. Every run calls it before it starts, and
`causal-gym-run sandbox reap` calls it on demand.

Which processes a marker names (the reaper runs as root on a shared head, so a wrong
match kills somebody else's work). A process is one of the dead runner's Ray instance
only when all three hold:

- it runs as the caller (its real and effective uid are the caller's);
- it started no earlier than the instance (the marker records the clock, in ticks since
  boot, read just before `ray.init`), so a process older than the instance, pid 1
  included, is never a candidate;
- it names the instance's session folder exactly: an argument `--session-dir=S`
  (or `--session_dir=S`, `--log-dir=S/logs`, ...) whose real path is the recorded one,
  or an open file directly in `S/logs` (Ray's workers and agents keep their logs
  there). A substring of a command line or a title is never enough.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.host.owners import owner_alive, owner_token, start_time
from orchestrator.host.private_state import state_folder

#: Arguments by which Ray's processes name their session folder or its logs folder.
_SESSION_ARGS = ("--session-dir=", "--session_dir=")
_LOGS_ARGS = ("--log-dir=", "--log_dir=", "--logs-dir=")
#: Largest marker read (one is about 300 bytes).
_MAX_MARKER_BYTES = 4096


class RayMarker(BaseModel):
    """What a runner notes about the embedded Ray instance it started."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_dir: str = Field(pattern=r"^/.+")  # its real path (never "/" itself)
    node_id: str
    uid: int
    #: Clock ticks since boot just before `ray.init`: every process of the instance
    #: started at or after it.
    since: int = Field(ge=0)


def _marker_dir() -> Path:
    return state_folder("ray")


def boot_ticks() -> int:
    """Now, in the clock ticks since boot that /proc/<pid>/stat gives start times in
    (one tick early, so a process started in this very tick still counts)."""
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return max(0, int(uptime * os.sysconf("SC_CLK_TCK")) - 1)


def note_embedded_ray(session_dir: str, node_id: str, since: int) -> Path:
    """Record the embedded Ray instance this process started (0600, named after it)."""
    marker = RayMarker(
        session_dir=os.path.realpath(session_dir), node_id=node_id, uid=os.geteuid(), since=since
    )
    path = _marker_dir() / f"{owner_token()}.json"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(marker.model_dump_json())
    return path


def forget_embedded_ray(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _read_marker(path: Path) -> RayMarker | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(_MAX_MARKER_BYTES + 1)
    try:
        return RayMarker.model_validate_json(raw)
    except ValidationError:
        return None


def _uids(pid: int) -> tuple[int, int] | None:
    """The process's real and effective uid."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("Uid:"):
            real, effective = line.split()[1:3]
            return int(real), int(effective)
    return None


def _names_session(pid: int, session: str) -> bool:
    """Whether the process names the session folder exactly (see the module doc)."""
    logs = os.path.join(session, "logs")
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    for raw in arguments:
        argument = raw.decode("utf-8", "replace")
        for prefix, wanted in [(p, session) for p in _SESSION_ARGS] + [
            (p, logs) for p in _LOGS_ARGS
        ]:
            if argument.startswith(prefix) and os.path.realpath(argument[len(prefix) :]) == wanted:
                return True
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            if os.path.dirname(os.readlink(f"/proc/{pid}/fd/{descriptor}")) == logs:
                return True
    return False


def belongs(pid: int, marker: RayMarker) -> bool:
    """Whether process `pid` is one of the marker's Ray instance (all three rules)."""
    if _uids(pid) != (marker.uid, marker.uid) or marker.uid != os.geteuid():
        return False
    started = start_time(pid)
    if started is None or not started.isdigit() or int(started) < marker.since:
        return False
    return _names_session(pid, marker.session_dir)


def _processes_of(marker: RayMarker) -> list[int]:
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != me and belongs(int(entry.name), marker):
            found.append(int(entry.name))
    return found


def reap_ray_instances(patience_s: float = 10.0) -> list[int]:
    """SIGKILL every process of an embedded Ray instance whose runner is gone; returns
    their pids. Markers of live runners are left alone."""
    killed: list[int] = []
    folder = _marker_dir()
    for marker_path in sorted(folder.glob("*.json")):
        token = marker_path.name.removesuffix(".json")
        if owner_alive(token):
            continue
        marker = _read_marker(marker_path)
        pids = _processes_of(marker) if marker is not None else []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + patience_s
        while time.monotonic() < deadline and any(_running(pid) for pid in pids):
            time.sleep(0.05)
        killed += pids
        forget_embedded_ray(marker_path)
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
    from orchestrator.sandbox.reaper import foreign_mounts

    elsewhere = foreign_mounts()
    if elsewhere:  # never acted on: see sandbox/reaper.py
        report["scratch_mounts_left_alone"] = elsewhere
    return report
