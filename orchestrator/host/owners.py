"""Who made a file on the host, and whether that process still runs.

Runners leave things in the temporary directory (sandbox scratch, the head's key
file) and remove them when they end; a runner killed with SIGKILL cannot. Such
things carry an owner token, `<pid>.<process start time>`, so the next runner can
tell the leftovers of a dead process (remove them) from the live state of another
(never touch it), even after the pid has been reused.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of its stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def owner_token(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{start_time(pid)}"


def owner_alive(token: str) -> bool:
    """Whether the process that made `token` still runs (same pid, same start time)."""
    pid, _, started = token.partition(".")
    return pid.isdigit() and start_time(int(pid)) == started


def dies_with_parent() -> list[str]:
    """A command prefix that makes a child die with the process that started it, even
    one killed by SIGKILL (the kernel's parent-death signal, set by setpriv)."""
    return ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []
