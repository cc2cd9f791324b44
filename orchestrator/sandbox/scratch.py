"""The local sandbox's writable places on the host, and who owns them.

Each sandbox gets a directory `<state>/sandboxes/<id>` in the caller's private state
folder (private_state.py: 0700, checked; never a world-writable place another user
could pre-create or race). As root, a tmpfs of the sandbox's disk size is mounted at
`<dir>/scratch` (mounts.py: on a descriptor, never on a path), holding `workspace/`,
`tmp/` and `shm/` (bound into the sandbox as /workspace, /tmp and /dev/shm), so the
three together can never hold more than the disk limit. Unprivileged, the same
folders are plain directories (the workspace then has no quota; /tmp and /dev/shm are
sized tmpfs mounts bubblewrap makes itself).

Every folder is made with `mkdir` relative to its parent's descriptor and opened with
O_NOFOLLOW, so no link is followed on the way, whatever anyone does meanwhile.

The id starts with an owner token, `<pid>.<process start time>`, so a reaper can tell
the sandboxes of a dead runner (reap them) from those of a live one (never touch) even
after the pid has been reused.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import SandboxError
from orchestrator.host.owners import owner_token
from orchestrator.host.private_state import state_folder
from orchestrator.sandbox.host_files import remove_tree
from orchestrator.sandbox.mounts import is_mounted, mount_tmpfs_on, unmount

SUBDIRS = ("workspace", "tmp", "shm")
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def sandboxes_dir() -> Path:
    return state_folder("sandboxes")


def owner_of(sandbox_id: str) -> str:
    pid, started, *_rest = [*sandbox_id.split("."), "", ""]
    return f"{pid}.{started}"


def new_sandbox_id() -> str:
    return f"{owner_token()}.{secrets.token_hex(6)}"


def _new_dir(parent_fd: int, name: str, mode: int) -> int:
    """Make `name` (it must not exist) and open it without following a link."""
    os.mkdir(name, mode, dir_fd=parent_fd)
    fd = os.open(name, _DIRECTORY, dir_fd=parent_fd)
    os.fchmod(fd, mode)  # whatever the umask took away
    return fd


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

    def create(self, disk_mb: int, uid: int, mount: bool, extra: tuple[str, ...] = ()) -> None:
        """Make the folders (`extra`: more writable places, like the workspace, for a
        sandbox that binds them at other paths) on one tmpfs of `disk_mb` when `mount`."""
        base = os.open(self.path.parent, _DIRECTORY)
        made: list[int] = [base]
        try:
            own = _new_dir(base, self.path.name, 0o711)
            made.append(own)
            mount_point = _new_dir(own, "scratch", 0o711)
            made.append(mount_point)
            if mount:
                mount_tmpfs_on(mount_point, disk_mb)
            # reopened by name from its parent: now the mounted tmpfs, not the folder under it
            scratch = os.open("scratch", _DIRECTORY, dir_fd=own)
            made.append(scratch)
            modes = (0o755, 0o1777, 0o1777, *(0o755 for _ in extra))
            for name, mode in zip((*SUBDIRS, *extra), modes, strict=True):
                folder = _new_dir(scratch, name, mode)
                made.append(folder)
                if uid != os.geteuid():
                    os.fchown(folder, uid, uid)
        except BaseException as exc:
            self._close(made)
            made.clear()  # closed before the unmount: an open root keeps a mount busy
            self.destroy()
            if isinstance(exc, OSError):
                raise SandboxError(
                    f"cannot make the sandbox's folders: {exc.strerror or exc}"
                ) from exc
            raise
        finally:
            self._close(made)

    @staticmethod
    def _close(descriptors: list[int]) -> None:
        for fd in descriptors:
            with contextlib.suppress(OSError):
                os.close(fd)

    def free_bytes(self) -> int:
        try:
            info = os.statvfs(self.root)
        except OSError:
            return 0
        return info.f_bavail * info.f_frsize

    def destroy(self) -> None:
        """Unmount and remove; safe to call twice and on a half-made sandbox."""
        if is_mounted(self.root):
            unmount(self.root)
        try:
            remove_tree(self.path)
        except OSError as exc:
            raise SandboxError(str(exc)) from exc
