"""The scratch tmpfs of a local sandbox: mounted on a descriptor, never on a path that
someone could swap, and found again by the reaper when a runner died with it.

`mount(8)` takes a path and follows every link in it, so a folder raced into a symlink
between its creation and the mount sent root's tmpfs wherever the link pointed (over a
root-owned folder, hiding its files, past the episode's end). Here the target is the
`/proc/self/fd/N` of a directory opened with O_NOFOLLOW: the kernel mounts on exactly
the directory that descriptor holds, whatever its path has become since. Unmounting
uses UMOUNT_NOFOLLOW, and only on a path inside the caller's private state folder.

Every scratch mount carries the source name `causal-gym-scratch`, so `leftover_mounts`
finds them all in /proc/self/mountinfo (only root makes mounts in the host's mount
namespace, so none of them is another user's).
"""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import SandboxError

SOURCE = "causal-gym-scratch"
_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_MNT_DETACH, _UMOUNT_NOFOLLOW = 0x2, 0x8


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount_tmpfs_on(fd: int, size_mb: int, mode: int = 0o711) -> None:
    """Mount a tmpfs of `size_mb` on the directory `fd` holds (nosuid, nodev)."""
    target = f"/proc/self/fd/{fd}".encode()
    options = f"size={size_mb}m,mode={mode:o}".encode()
    done = _libc().mount(SOURCE.encode(), target, b"tmpfs", _MS_NOSUID | _MS_NODEV, options)
    if done != 0:
        code = ctypes.get_errno()
        raise SandboxError(f"cannot mount the sandbox's tmpfs: {os.strerror(code)}")


def unmount(path: Path) -> bool:
    """Unmount the tmpfs at `path` (detached when still busy: the kernel frees it once
    the last process lets go). Returns whether something was unmounted."""
    libc = _libc()
    target = str(path).encode()
    if libc.umount2(target, _UMOUNT_NOFOLLOW) == 0:
        return True
    if ctypes.get_errno() == errno.EBUSY:
        return bool(libc.umount2(target, _UMOUNT_NOFOLLOW | _MNT_DETACH) == 0)
    return False


def _unescape(field: str) -> str:
    """The kernel's mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code in ("\\040", "\\011", "\\012", "\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field


@dataclass(frozen=True)
class ScratchMount:
    mount_point: Path

    @property
    def sandbox_id(self) -> str:
        """Scratch mounts sit at <sandboxes>/<id>/scratch."""
        return self.mount_point.parent.name


def leftover_mounts() -> list[ScratchMount]:
    """Every scratch tmpfs mounted in this mount namespace, wherever it is."""
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 2 and tail[0] == "tmpfs" and tail[1] == SOURCE:
            found.append(ScratchMount(Path(_unescape(fields[4]))))
    return found


def is_mounted(path: Path) -> bool:
    return any(m.mount_point == path for m in leftover_mounts())
