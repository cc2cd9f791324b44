"""The local sandbox's writable places on the host, and who owns them.

Each sandbox gets a directory `<tmp>/causal-gym-sandboxes/<id>`. As root, a tmpfs of
the sandbox's disk size is mounted at `<dir>/scratch`, holding `workspace/`, `tmp/`
and `shm/` (bound into the sandbox as /workspace, /tmp and /dev/shm), so the three
together can never hold more than the disk limit. Unprivileged, the same folders are
plain directories (the workspace then has no quota; /tmp and /dev/shm are sized
tmpfs mounts bubblewrap makes itself).

The id starts with an owner token, `<pid>.<process start time>`, so a reaper can tell
the sandboxes of a dead runner (reap them) from those of a live one (never touch) even
after the pid has been reused.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import SandboxError
from orchestrator.owners import owner_token
from orchestrator.sandbox.host_files import remove_tree

SUBDIRS = ("workspace", "tmp", "shm")


def sandboxes_dir() -> Path:
    return Path(tempfile.gettempdir()) / "causal-gym-sandboxes"


def owner_of(sandbox_id: str) -> str:
    pid, started, *_rest = [*sandbox_id.split("."), "", ""]
    return f"{pid}.{started}"


def new_sandbox_id() -> str:
    return f"{owner_token()}.{secrets.token_hex(6)}"


def _mounted(path: Path) -> bool:
    target = str(path)
    with contextlib.suppress(OSError), open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == target for line in mounts)
    return False


@dataclass
class Scratch:
    """One sandbox's directory; `create` makes it, `destroy` removes every trace."""

    sandbox_id: str
    path: Path

    @classmethod
    def at(cls, sandbox_id: str) -> Scratch:
        return cls(sandbox_id, sandboxes_dir() / sandbox_id)

    @property
    def root(self) -> Path:
        return self.path / "scratch"

    def place(self, name: str) -> Path:
        return self.root / name

    def create(self, disk_mb: int, uid: int, mount: bool) -> None:
        base = sandboxes_dir()
        base.mkdir(mode=0o711, exist_ok=True)
        self.path.mkdir(mode=0o711)
        self.root.mkdir(mode=0o711)
        if mount:
            options = f"size={disk_mb}m,mode=0711,nosuid,nodev"
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", options, "causal-gym-scratch", str(self.root)],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                self.destroy()
                raise SandboxError(f"cannot mount the sandbox's tmpfs: {done.stderr.strip()}")
        for name, mode in zip(SUBDIRS, (0o755, 0o1777, 0o1777), strict=True):
            folder = self.place(name)
            folder.mkdir()
            os.chmod(folder, mode)
            if uid != os.geteuid():
                os.chown(folder, uid, uid)

    def free_bytes(self) -> int:
        try:
            info = os.statvfs(self.root)
        except OSError:
            return 0
        return info.f_bavail * info.f_frsize

    def destroy(self) -> None:
        """Unmount and remove; safe to call twice and on a half-made sandbox."""
        if _mounted(self.root):
            done = subprocess.run(["umount", str(self.root)], capture_output=True)
            if done.returncode != 0:  # still busy: detach it, the kernel frees it later
                subprocess.run(["umount", "-l", str(self.root)], capture_output=True)
        try:
            remove_tree(self.path)
        except OSError as exc:
            raise SandboxError(str(exc)) from exc
