"""`local` sandbox: bubblewrap, the embedded default.

Each exec is a fresh `bwrap` in new pid, net, ipc, uts and cgroup namespaces (and a
user namespace when not run as root) with a clean environment. The filesystem is
the host's system directories and the analyst venv read-only, the host's
site-packages hidden under empty tmpfs, a private /tmp, and /workspace as the only
writable place. Limits come from prlimit
(processes, address space, file size, CPU time) and taskset (CPU count). Run as
root, bwrap mounts as root and setpriv then drops the command to the sandbox's own
unprivileged uid (no capabilities, no new privileges), so the process limit binds
per sandbox. At the deadline the host kills bwrap, whose pid namespace takes every
process of the command with it.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
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
_UID_BASE = 2_000_000


def bwrap_path() -> str:
    found = shutil.which("bwrap")
    if not found:
        raise SandboxUnavailableError(
            "bubblewrap is not installed: apt-get install bubblewrap (or use --sandbox docker)"
        )
    return found


def _system_mounts() -> list[str]:
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
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
        self.uid = _UID_BASE + secrets.randbelow(1_000_000) if self._root else os.geteuid()
        self.workspace: Path | None = None

    # --- lifecycle ----------------------------------------------------------------
    def open(self, files: Mapping[str, bytes]) -> None:
        if self.workspace is not None:
            raise SandboxError("sandbox already open")
        self.workspace = Path(tempfile.mkdtemp(prefix="causal-gym-ws-"))
        if self._root:
            os.chown(self.workspace, self.uid, self.uid)
        for name, data in files.items():
            self.write_file(name, data)

    def close(self) -> None:
        if self.workspace is not None:
            shutil.rmtree(self.workspace, ignore_errors=True)
            self.workspace = None

    # --- exec ---------------------------------------------------------------------
    def _bwrap_args(self) -> list[str]:
        assert self.workspace is not None
        tc = self.toolchain
        # As root, bwrap keeps the host's user namespace so that setpriv can drop the
        # command to the sandbox's own uid (and RLIMIT_NPROC then binds); otherwise
        # an unprivileged user namespace.
        namespaces = (
            [
                "--unshare-ipc",
                "--unshare-pid",
                "--unshare-net",
                "--unshare-uts",
                "--unshare-cgroup-try",
            ]
            if self._root
            else ["--unshare-all"]
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
            str(self.workspace),
            WORKSPACE,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "1777",
            "--tmpfs",
            "/dev/shm",
            "--perms",
            "1777",
            "--tmpfs",
            "/tmp",
            "--chdir",
            WORKSPACE,
        ]
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
        return ["taskset", "--cpu-list", f"0-{cores - 1}"] if cores < available else []

    def command_line(self, argv: list[str], timeout_s: float) -> list[str]:
        if self._root:
            drop = [
                "setpriv",
                f"--reuid={self.uid}",
                f"--regid={self.uid}",
                "--clear-groups",
                "--no-new-privs",
                "--",
            ]
            return [
                *self._cpu_pin(),
                *self._bwrap_args(),
                "--",
                *drop,
                *self._limits(timeout_s),
                *argv,
            ]
        return [
            *self._cpu_pin(),
            *self._limits(timeout_s),
            *self._bwrap_args(),
            "--cap-drop",
            "ALL",
            "--",
            *argv,
        ]

    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        if self.workspace is None:
            raise SandboxError("exec on a sandbox that is not open")
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
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
        except OSError as exc:
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
        out.join(KILL_GRACE_S)
        err.join(KILL_GRACE_S)
        return ExecResult(
            exit_code=None if timed_out else proc.returncode,
            stdout=out.text(),
            stderr=err.text(),
            timed_out=timed_out,
            truncated=bool(out.dropped or err.dropped),
            duration_s=time.monotonic() - started,
        )

    # --- files --------------------------------------------------------------------
    def _host_path(self, path: str) -> Path:
        if self.workspace is None:
            raise SandboxError("file access on a sandbox that is not open")
        rel = workspace_relpath(path)
        host = self.workspace / rel
        real = Path(os.path.realpath(host))
        if real != host and not str(real).startswith(str(self.workspace.resolve()) + "/"):
            raise SandboxPathError(f"{path!r} resolves outside {WORKSPACE}")
        return host

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        host = self._host_path(path)
        try:
            fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise SandboxPathError(
                f"cannot read {path!r} from {WORKSPACE}: {exc.strerror}"
            ) from exc
        with os.fdopen(fd, "rb") as handle:
            if not os.path.stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # type: ignore[attr-defined]
                raise SandboxPathError(f"{path!r} is not a regular file")
            return handle.read(max_bytes)

    def write_file(self, path: str, data: bytes) -> None:
        host = self._host_path(path)
        host.parent.mkdir(parents=True, exist_ok=True)
        tmp = host.with_name(f".{host.name}.staging")
        tmp.write_bytes(data)
        os.chmod(tmp, 0o644)
        if self._root:
            os.chown(tmp, self.uid, self.uid)
        os.replace(tmp, host)


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
