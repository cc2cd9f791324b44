"""Remove what dead runners left behind: local sandbox directories, their tmpfs mounts
and control groups (Docker containers are reaped by docker_backend.reap_containers).

A runner killed with SIGKILL cannot clean up. Its bubblewrap processes die with it
(--die-with-parent takes the whole pid namespace), but the workspace (with the staged
data), the mount and the cgroups stay. Every sandbox id starts with its owner's pid
and start time, so reaping touches only sandboxes whose owner is gone.

Mounts are found from the kernel's list, not from the folders: a scratch tmpfs in this
user's state folder whose owner is gone is unmounted, and its folder removed. One
elsewhere (an older causal-gym mounted under /tmp, a path others may have changed
since) is reported by `foreign_mounts` and never acted on: unmounting by a path
someone else controls is the very race the state folder exists to avoid.
"""

from __future__ import annotations

import contextlib

from orchestrator.errors import SandboxError
from orchestrator.host.owners import owner_alive
from orchestrator.sandbox.cgroups import CgroupSet
from orchestrator.sandbox.mounts import leftover_mounts, unmount
from orchestrator.sandbox.scratch import Scratch, owner_of, sandboxes_dir


def local_sandbox_ids() -> set[str]:
    ids: set[str] = set()
    with contextlib.suppress(OSError):
        ids |= {p.name for p in sandboxes_dir().iterdir() if p.is_dir()}
    if CgroupSet.available():
        ids |= set(CgroupSet.existing())
    return ids


def reap_mounts() -> list[str]:
    """Unmount every scratch tmpfs in this user's state folder whose owner is gone;
    returns the mount points."""
    home = sandboxes_dir()
    undone = []
    for mount in leftover_mounts():
        if mount.mount_point.parent.parent != home or owner_alive(owner_of(mount.sandbox_id)):
            continue
        if unmount(mount.mount_point):
            undone.append(str(mount.mount_point))
    return undone


def foreign_mounts() -> list[str]:
    """Scratch tmpfs mounts outside this user's state folder (left alone)."""
    home = sandboxes_dir()
    return [str(m.mount_point) for m in leftover_mounts() if m.mount_point.parent.parent != home]


def reap_local() -> list[str]:
    """Remove the sandboxes of dead owners; returns their ids."""
    reap_mounts()
    removed = []
    for sandbox_id in sorted(local_sandbox_ids()):
        if owner_alive(owner_of(sandbox_id)):
            continue
        if CgroupSet.available():
            CgroupSet(sandbox_id).remove()
        with contextlib.suppress(SandboxError):
            Scratch.at(sandbox_id).destroy()
        removed.append(sandbox_id)
    return removed


def reap_local_for_run(run_id: str | None = None) -> list[str]:
    """The registry's reaper (local sandboxes belong to a process, not a run id)."""
    return reap_local()
