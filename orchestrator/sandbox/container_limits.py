"""Which sandbox totals a Docker episode's command ran into, read on the host.

The local backend tells the agent when a command hit the memory total, the process
limit or the disk ("[sandbox limit reached: ...]"), from its own cgroups and tmpfs.
A Docker container enforces the same totals, but an exec only returns an exit code
(the supervisor's, which hides a killed child). So the host reads the container's own
counters: the memory and pids groups Docker made for it (found from its main
process's /proc/<pid>/cgroup: oom kills and refused forks) and the free space of its
tmpfs mounts (through /proc/<pid>/root). That needs the host's root, as the local
backend's cgroups do; without it only an exec killed by SIGKILL counts as memory.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from orchestrator.sandbox.base import DISK_FULL_BYTES
from orchestrator.sandbox.cgroups import groups_of, limit_events

#: The container's writable places (docker_backend's tmpfs mounts).
TMPFS_MOUNTS = ("workspace", "tmp", "dev/shm")


class ContainerLimits:
    """The limit counters of one running container, by its main process's pid."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.groups = groups_of(pid) if pid > 0 else None
        self.root = Path(f"/proc/{pid}/root")

    @property
    def readable(self) -> bool:
        return self.groups is not None

    def counters(self) -> dict[str, int]:
        if self.groups is None:
            return {}
        memory, pids, v2 = self.groups
        return limit_events(memory, pids, v2)

    def disk_full(self) -> bool:
        for mount in TMPFS_MOUNTS:
            with contextlib.suppress(OSError):
                stats = os.statvfs(self.root / mount)
                if stats.f_bavail * stats.f_frsize < DISK_FULL_BYTES:
                    return True
        return False

    def hit_since(self, before: dict[str, int]) -> tuple[str, ...]:
        """The limits reached since `before` (a `counters()` taken before the command)."""
        after = self.counters()
        hit = [name for name, count in after.items() if count > before.get(name, 0)]
        if self.readable and self.disk_full():
            hit.append("disk")
        return tuple(hit)
