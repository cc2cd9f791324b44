"""Remove what dead runners left behind: local sandbox directories, their tmpfs mounts
and control groups (Docker containers are reaped by docker_backend.reap_containers).

A runner killed with SIGKILL cannot clean up. Its bubblewrap processes die with it
(--die-with-parent takes the whole pid namespace), but the workspace (with the staged
data), the mount and the cgroups stay. Every sandbox id starts with its owner's pid
and start time, so reaping touches only sandboxes whose owner is gone.
"""

from __future__ import annotations

import contextlib

from orchestrator.errors import SandboxError
from orchestrator.owners import owner_alive
from orchestrator.sandbox.cgroups import CgroupSet
from orchestrator.sandbox.scratch import Scratch, owner_of, sandboxes_dir


def local_sandbox_ids() -> set[str]:
    ids: set[str] = set()
    with contextlib.suppress(OSError):
        ids |= {p.name for p in sandboxes_dir().iterdir() if p.is_dir()}
    if CgroupSet.available():
        ids |= set(CgroupSet.existing())
    return ids


def reap_local() -> list[str]:
    """Remove the sandboxes of dead owners; returns their ids."""
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
