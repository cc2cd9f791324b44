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
import math
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
    KILL_GRACE_S,
    WORKSPACE,
    CappedReader,
    ExecResult,
    Sandbox,
    SandboxLimits,
    workspace_relpath,
)
from orchestrator.sandbox.cgroups import CgroupLimits, CgroupSet
from orchestrator.sandbox.host_files import FileRefused, read_regular, write_atomic
from orchestrator.sandbox.reaper import reap_local
from orchestrator.sandbox.scratch import Scratch, new_sandbox_id
from orchestrator.sandbox.toolchain import LocalToolchain, ensure_local_toolchain

TOOLCHAIN_MOUNT = "/opt/analyst"
SANDBOX_ENV = {
    "PATH": f"{TOOLCHAIN_MOUNT}/bin:/usr/local/bin:/usr/bin:/bin",
    "HOME": WORKSPACE,
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32")
#: What the shell tools need from /etc (awk and friends are /etc/alternatives links).
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives", "/etc/nsswitch.conf")
_UID_BASE = 2_000_000
#: Writes the launcher's pid into each cgroup.procs file, then becomes bubblewrap, so
#: not one instruction of the sandbox runs outside its cgroups.
_JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
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


def _system_mounts() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    args += ["--perms", "0755", "--dir", "/etc"]
    for path in _ETC_FILES:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


class LocalSandbox(Sandbox):
    kind = "local"

    def __init__(
        self, limits: SandboxLimits | None = None, toolchain: LocalToolchain | None = None
    ) -> None:
        self.limits = limits or SandboxLimits()
        self._bwrap = bwrap_path()
        self.toolchain = toolchain or ensure_local_toolchain()
        self._root = os.geteuid() == 0
        self._cgroups = self._root and CgroupSet.available()
        self.uid = _UID_BASE + secrets.randbelow(1_000_000) if self._root else os.geteuid()
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
            self.scratch.create(self.limits.disk_mb, self.uid, mount=self._root)
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
    def _bwrap_args(self) -> list[str]:
        assert self.scratch is not None
        tc = self.toolchain
        # As root, bwrap keeps the host's user namespace so that setpriv can drop the
        # command to the sandbox's own uid (and RLIMIT_NPROC then binds); otherwise
        # an unprivileged user namespace that may not create further ones.
        namespaces = (
            [
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
            ]
            if self._root
            else ["--unshare-all", "--disable-userns"]
        )
        args = [
            self._bwrap,
            *namespaces,
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        args += _system_mounts()
        if not str(tc.base_prefix).startswith("/usr/"):
            # Parents are created traversable (a host /root is 0700) but stay empty.
            for parent in reversed(tc.base_prefix.parents[:-1]):
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", str(tc.base_prefix), str(tc.base_prefix)]
        for hidden in tc.site_packages_to_hide:
            if hidden.is_dir():
                args += ["--tmpfs", str(hidden)]
        args += [
            "--perms",
            "0755",
            "--dir",
            str(Path(TOOLCHAIN_MOUNT).parent),
            "--ro-bind",
            str(tc.venv),
            TOOLCHAIN_MOUNT,
            "--bind",
            str(self.scratch.place("workspace")),
            WORKSPACE,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
        ]
        if self._root:  # one tmpfs (the disk quota) holds all three
            args += ["--bind", str(self.scratch.place("shm")), "/dev/shm"]
            args += ["--bind", str(self.scratch.place("tmp")), "/tmp"]
        else:
            size = str(max(1, self.limits.disk_mb // 4) << 20)
            args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
            args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        args += ["--chdir", WORKSPACE]
        for name, value in SANDBOX_ENV.items():
            args += ["--setenv", name, value]
        return args

    def _limits(self, timeout_s: float) -> list[str]:
        lim = self.limits
        nproc = lim.pids if self._root else lim.pids + _processes_of(os.geteuid())
        return [
            "prlimit",
            f"--nproc={nproc}",
            f"--as={lim.memory_mb * 1024 * 1024}",
            f"--fsize={lim.file_mb * 1024 * 1024}",
            "--core=0",
            "--nofile=1024",
            f"--cpu={math.ceil(timeout_s * max(lim.cpus, 1.0)) + 5}",
            "--",
        ]

    def _cpu_pin(self) -> list[str]:
        available = os.cpu_count() or 1
        cores = max(1, min(available, math.ceil(self.limits.cpus)))
        if cores >= available:
            return []
        first = secrets.randbelow(available - cores + 1)  # spread sandboxes over cores
        return ["taskset", "--cpu-list", f"{first}-{first + cores - 1}"]

    def command_line(self, argv: list[str], timeout_s: float) -> list[str]:
        if not self._root:
            return [
                *self._cpu_pin(),
                *self._limits(timeout_s),
                *self._bwrap_args(),
                "--cap-drop",
                "ALL",
                "--",
                *argv,
            ]
        drop = [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--",
        ]
        no_userns = [
            self._bwrap,
            "--unshare-user",
            "--disable-userns",
            "--dev-bind",
            "/",
            "/",
            "--die-with-parent",
            "--chdir",
            WORKSPACE,
            "--",
        ]
        inner = [*drop, *self._limits(timeout_s), *no_userns, *argv]
        outer = [*self._bwrap_args(), "--", *inner]
        if self.cgroups is None:
            return [*self._cpu_pin(), *outer]
        return ["/bin/sh", "-c", _JOIN_CGROUPS, "join", *self.cgroups.procs_files, "--", *outer]

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
        if self._root and self.scratch is not None and self.scratch.free_bytes() < 1 << 20:
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


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count
