"""The bubblewrap command line of one exec in the local sandbox.

Kept apart from the sandbox's lifecycle (bubblewrap.py) because it is the part a
reviewer reads line by line: which namespaces, which mounts (read-only or not), which
limits, and in which order privileges are dropped. As root the chain is: join the
sandbox's cgroups -> bwrap (mounts, namespaces) -> setpriv (the sandbox's own uid, no
new privileges) -> prlimit (per-process limits) -> an unprivileged bwrap that forbids
new user namespaces -> the command. Unprivileged: [taskset] prlimit bwrap (user
namespace, --disable-userns, capabilities dropped) -> the command.
"""

from __future__ import annotations

import math
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from orchestrator.sandbox.base import WORKSPACE, SandboxLimits
from orchestrator.sandbox.scratch import Scratch
from orchestrator.sandbox.toolchain import LocalToolchain

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
#: Sandbox uids (as root) are drawn above this, far from any real account.
UID_BASE = 2_000_000
#: Writes the launcher's pid into each cgroup.procs file, then becomes bubblewrap, so
#: not one instruction of the sandbox runs outside its cgroups.
_JOIN_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


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


@dataclass(frozen=True)
class BwrapCommand:
    bwrap: str
    toolchain: LocalToolchain
    scratch: Scratch
    limits: SandboxLimits
    root: bool
    uid: int
    cgroup_procs: tuple[str, ...]
    #: More writable places of the scratch, (place, path in the sandbox), and host
    #: folders bound read-only at their own paths (LocalSandbox's `places`, `read_only`).
    binds: tuple[tuple[str, str], ...] = ()
    read_only: tuple[str, ...] = ()

    def _bwrap_args(self) -> list[str]:
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
            if self.root
            else ["--unshare-all", "--disable-userns"]
        )
        args = [
            self.bwrap,
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
        ]
        for place, path in self.binds:
            args += ["--bind", str(self.scratch.place(place)), path]
        args += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
        ]
        if self.root:  # one tmpfs (the disk quota) holds all three
            args += ["--bind", str(self.scratch.place("shm")), "/dev/shm"]
            args += ["--bind", str(self.scratch.place("tmp")), "/tmp"]
        else:
            size = str(max(1, self.limits.disk_mb // 4) << 20)
            args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
            args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
        # after /tmp and /dev/shm: a checkout under /tmp stays visible over the sandbox's own
        for path in self.read_only:  # parents traversable, as the toolchain's are
            for parent in reversed(Path(path).parents[:-1]):
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", path, path]
        args += ["--chdir", WORKSPACE]
        for name, value in SANDBOX_ENV.items():
            args += ["--setenv", name, value]
        return args

    def _limits(self, timeout_s: float) -> list[str]:
        lim = self.limits
        nproc = lim.pids if self.root else lim.pids + _processes_of(os.geteuid())
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

    def argv(self, argv: list[str], timeout_s: float) -> list[str]:
        if not self.root:
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
            self.bwrap,
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
        if not self.cgroup_procs:
            return [*self._cpu_pin(), *outer]
        return ["/bin/sh", "-c", _JOIN_CGROUPS, "join", *self.cgroup_procs, "--", *outer]


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
