"""`local` sandbox: bubblewrap, the embedded default.

Each exec is a fresh `bwrap` in new pid, net, ipc, uts and cgroup namespaces with a
clean environment: the host's system directories and the analyst venv read-only, the
host's site-packages hidden under empty tmpfs, and /workspace, /tmp and /dev/shm as
the only writable places. When the command ends (or its deadline passes) its pid
namespace ends, and every process in it, however it detached, dies with it.

As root (the way the orchestrator runs): bwrap mounts as root, `setpriv` drops the
command to the sandbox's own unprivileged uid, and a nested unprivileged bwrap
forbids new user namespaces. Totals come from the sandbox's cgroups (memory of all
processes, processes, CPU quota, a CPU set the agent cannot widen) and one tmpfs of
the disk size holds /workspace, /tmp and /dev/shm together. Per-process limits come
from prlimit (address space, file size, CPU seconds, processes of the uid).

Unprivileged, bwrap runs in a user namespace (with --disable-userns) and only the
per-process limits, a taskset pin (which the agent can widen) and sized /tmp and
/dev/shm remain: no memory, process or CPU totals and no workspace quota. That is
logged once, in these words, when such a sandbox is made.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from orchestrator.errors import SandboxError, SandboxPathError, SandboxUnavailableError
from orchestrator.sandbox.base import (
    DISK_FULL_BYTES,
    KILL_GRACE_S,
    CappedReader,
    ExecResult,
    Sandbox,
    SandboxLimits,
    workspace_relpath,
)
from orchestrator.sandbox.bwrap_command import UID_BASE, BwrapCommand
from orchestrator.sandbox.cgroups import CgroupLimits, CgroupSet
from orchestrator.sandbox.host_files import FileRefused, read_regular, write_atomic
from orchestrator.sandbox.reaper import reap_local
from orchestrator.sandbox.scratch import SUBDIRS, Scratch, new_sandbox_id
from orchestrator.sandbox.toolchain import LocalToolchain, ensure_local_toolchain

UNPRIVILEGED_NOTE = (
    "local sandbox runs unprivileged: only per-process limits apply (address space, file "
    "size, CPU seconds, processes of this user) plus sized /tmp and /dev/shm; there are "
    "no memory, process or CPU totals, no workspace quota, and the agent can widen its "
    "CPU pin. Run as root for cgroup totals and a disk quota."
)
log = logging.getLogger("orchestrator.sandbox")


def bwrap_path() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailableError(
            "bubblewrap is not installed: apt-get install bubblewrap (or use --sandbox docker)"
        )
    return found


@functools.cache
def _warn_unprivileged() -> None:
    log.warning(UNPRIVILEGED_NOTE)


def setup(image: str | None = None) -> str:
    """Build (once) the analyst toolchain the local sandboxes run on."""
    return f"local toolchain ready: {ensure_local_toolchain().venv}"


class LocalSandbox(Sandbox):
    kind = "local"

    @classmethod
    def create(
        cls, limits: SandboxLimits | None, image: str | None, run_id: str | None
    ) -> LocalSandbox:
        """The registry's factory (a local sandbox has no image and needs no run id)."""
        return cls(limits)

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        toolchain: LocalToolchain | None = None,
        places: Mapping[str, str] | None = None,
        read_only: Sequence[Path] = (),
    ) -> None:
        """`places` (path in the sandbox -> place name) are more writable folders on
        the sandbox's own tmpfs, and `read_only` host folders bound at their own paths:
        a Harbor task (integrations/harbor_env.py) wants /logs, /tests and /solution,
        and its verifier the causal_gym source."""
        self.limits = limits or SandboxLimits()
        self.places = dict(places or {})
        for path, place in self.places.items():
            if place in SUBDIRS or not place.isidentifier() or not path.startswith("/"):
                raise SandboxError(f"sandbox place {place!r} at {path!r} is not allowed")
        self.read_only = tuple(str(p) for p in read_only)
        self._bwrap = bwrap_path()
        self.toolchain = toolchain or ensure_local_toolchain()
        self._root = os.geteuid() == 0
        self._cgroups = self._root and CgroupSet.available()
        self.uid = UID_BASE + secrets.randbelow(1_000_000) if self._root else os.geteuid()
        self.scratch: Scratch | None = None
        self.cgroups: CgroupSet | None = None
        if not self._root:
            _warn_unprivileged()

    @property
    def workspace(self) -> Path | None:
        return self.scratch.place("workspace") if self.scratch else None

    # --- lifecycle ----------------------------------------------------------------
    def open(self, files: Mapping[str, bytes]) -> None:
        if self.scratch is not None:
            raise SandboxError("sandbox already open")
        reap_local()  # whatever runners killed earlier left behind
        sandbox_id = new_sandbox_id()
        self.scratch = Scratch.at(sandbox_id)
        try:
            extra = tuple(self.places.values())
            self.scratch.create(self.limits.disk_mb, self.uid, mount=self._root, extra=extra)
            if self._cgroups:
                self.cgroups = CgroupSet(sandbox_id)
                lim = self.limits
                self.cgroups.create(CgroupLimits(lim.memory_mb << 20, lim.pids, lim.cpus))
            for name, data in files.items():
                self.write_file(name, data)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Kill every process of the sandbox, remove its cgroups, mount and files."""
        try:
            if self.cgroups is not None:
                self.cgroups.remove()
        finally:
            self.cgroups = None
            if self.scratch is not None:
                scratch, self.scratch = self.scratch, None
                scratch.destroy()

    # --- exec ---------------------------------------------------------------------
    def command_line(self, argv: list[str], timeout_s: float) -> list[str]:
        assert self.scratch is not None
        procs = tuple(self.cgroups.procs_files) if self.cgroups else ()
        binds = tuple((place, path) for path, place in self.places.items())
        command = BwrapCommand(
            self._bwrap, self.toolchain, self.scratch, self.limits, self._root, self.uid, procs,
            binds, self.read_only,
        )  # fmt: skip
        return command.argv(argv, timeout_s)

    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        if self.scratch is None:
            raise SandboxError("exec on a sandbox that is not open")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        before = self.cgroups.events() if self.cgroups else {}
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                self.command_line(argv, timeout_s),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={},
                cwd="/",
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            raise SandboxUnavailableError(f"cannot start bubblewrap: {exc}") from exc
        out = CappedReader(proc.stdout, self.limits.output_bytes)  # type: ignore[arg-type]
        err = CappedReader(proc.stderr, self.limits.output_bytes)  # type: ignore[arg-type]
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            proc.wait(timeout=KILL_GRACE_S + 5)
        if self.cgroups is not None:  # nothing of this exec may outlive it
            self.cgroups.kill_all()
        out.join(KILL_GRACE_S)
        err.join(KILL_GRACE_S)
        return ExecResult(
            exit_code=None if timed_out else proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            timed_out=timed_out,
            truncated=bool(out.dropped or err.dropped),
            duration_s=time.monotonic() - started,
            limits_hit=self._limits_hit(before),
        )

    def _limits_hit(self, before: dict[str, int]) -> tuple[str, ...]:
        hit = []
        if self.cgroups is not None:
            after = self.cgroups.events()
            hit += [name for name, count in after.items() if count > before.get(name, 0)]
        if self._root and self.scratch is not None and self.scratch.free_bytes() < DISK_FULL_BYTES:
            hit.append("disk")
        return tuple(hit)

    # --- files --------------------------------------------------------------------
    def _workspace_root(self) -> Path:
        if self.scratch is None:
            raise SandboxError("file access on a sandbox that is not open")
        return self.scratch.place("workspace")

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        try:
            return read_regular(self._workspace_root(), workspace_relpath(path), max_bytes)
        except FileRefused as exc:
            raise SandboxPathError(str(exc)) from exc

    def write_file(self, path: str, data: bytes) -> None:
        owner = (self.uid, self.uid) if self._root else None
        try:
            write_atomic(self._workspace_root(), workspace_relpath(path), data, owner)
        except FileRefused as exc:
            raise SandboxPathError(str(exc)) from exc


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
