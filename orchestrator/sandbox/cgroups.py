"""Per-sandbox control groups: totals for memory, processes and CPU, and a CPU set
that the agent cannot widen.

Per-process limits (prlimit) let five processes of 120 MB each run under a 200 MB
"limit"; a cgroup caps all of a sandbox's processes together. We use cgroup v2 when
the machine runs the unified hierarchy (/sys/fs/cgroup/cgroup.controllers) and the v1
controllers `memory`, `pids`, `cpu` and `cpuset` otherwise (as Docker does). Groups
live under our own parent, `causal-gym/`, one per sandbox, named after the sandbox;
nothing here touches a group it did not create. Needs root; `CgroupSet.available()`
says whether this process can use them.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import SandboxError

ROOT = Path("/sys/fs/cgroup")
PARENT = "causal-gym"
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuset")
CFS_PERIOD_US = 100_000


@dataclass(frozen=True)
class CgroupLimits:
    memory_bytes: int
    pids: int
    cpus: float


def unified() -> bool:
    return (ROOT / "cgroup.controllers").exists()


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise SandboxError(f"cannot set {path} to {value!r}: {exc.strerror or exc}") from exc


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(path: Path, key: str) -> int:
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _cpu_list(text: str) -> list[int]:
    cpus: list[int] = []
    for part in text.strip().split(","):
        if "-" in part:
            low, high = part.split("-")
            cpus += range(int(low), int(high) + 1)
        elif part:
            cpus.append(int(part))
    return cpus


class CgroupSet:
    """The control groups of one sandbox (one directory per v1 controller, or one v2
    directory). `create` applies the limits; `procs_files` are what a launcher writes
    its pid into before it execs the sandbox, so no process ever runs outside."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.v2 = unified()
        if self.v2:
            self.dirs = {c: ROOT / PARENT / name for c in V1_CONTROLLERS}
        else:
            self.dirs = {c: ROOT / c / PARENT / name for c in V1_CONTROLLERS}

    @staticmethod
    def available() -> bool:
        if os.geteuid() != 0:
            return False
        if unified():
            return os.access(ROOT, os.W_OK)
        return all(os.access(ROOT / c, os.W_OK) for c in V1_CONTROLLERS)

    @staticmethod
    def existing() -> list[str]:
        """Names of every sandbox group under our parent (for the reaper)."""
        base = ROOT / PARENT if unified() else ROOT / "pids" / PARENT
        try:
            return sorted(p.name for p in base.iterdir() if p.is_dir())
        except OSError:
            return []

    # --- lifecycle ----------------------------------------------------------------
    def _prepare_parents(self) -> None:
        if self.v2:
            parent = ROOT / PARENT
            parent.mkdir(exist_ok=True)
            wanted = set(_read(ROOT / "cgroup.subtree_control").split())
            enable = " ".join(f"+{c}" for c in V1_CONTROLLERS if c in wanted)
            if enable:
                _write(parent / "cgroup.subtree_control", enable)
            return
        for controller in V1_CONTROLLERS:
            (ROOT / controller / PARENT).mkdir(exist_ok=True)
        cpuset = ROOT / "cpuset" / PARENT
        for knob in ("cpuset.cpus", "cpuset.mems"):  # v1 cpusets start empty
            if not _read(cpuset / knob).strip():
                _write(cpuset / knob, _read(ROOT / "cpuset" / knob).strip())

    def create(self, limits: CgroupLimits) -> None:
        self._prepare_parents()
        for path in set(self.dirs.values()):
            path.mkdir(exist_ok=True)
        cpus = self.pick_cpus(math.ceil(limits.cpus))
        quota = max(1000, int(limits.cpus * CFS_PERIOD_US))
        memory = str(limits.memory_bytes)
        if self.v2:
            d = self.dirs["memory"]
            _write(d / "memory.max", memory)
            with contextlib.suppress(SandboxError):
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(limits.pids))
            _write(d / "cpu.max", f"{quota} {CFS_PERIOD_US}")
            _write(d / "cpuset.cpus", cpus)
            return
        _write(self.dirs["memory"] / "memory.limit_in_bytes", memory)
        with contextlib.suppress(SandboxError):  # only where swap accounting is on
            _write(self.dirs["memory"] / "memory.memsw.limit_in_bytes", memory)
        _write(self.dirs["pids"] / "pids.max", str(limits.pids))
        _write(self.dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
        _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(quota))
        _write(self.dirs["cpuset"] / "cpuset.mems", _read(ROOT / "cpuset" / PARENT / "cpuset.mems"))
        _write(self.dirs["cpuset"] / "cpuset.cpus", cpus)

    def pick_cpus(self, count: int) -> str:
        """The `count` cores the fewest other sandboxes are pinned to."""
        parent = (ROOT / PARENT) if self.v2 else (ROOT / "cpuset" / PARENT)
        allowed = _cpu_list(_read(parent / "cpuset.cpus") or _read(ROOT / "cpuset.cpus.effective"))
        if not allowed:
            allowed = list(range(os.cpu_count() or 1))
        load = dict.fromkeys(allowed, 0)
        with contextlib.suppress(OSError):
            for sibling in parent.iterdir():
                if sibling.is_dir() and sibling.name != self.name:
                    for cpu in _cpu_list(_read(sibling / "cpuset.cpus")):
                        load[cpu] = load.get(cpu, 0) + 1
        chosen = sorted(allowed, key=lambda cpu: (load[cpu], cpu))[: max(1, count)]
        return ",".join(str(cpu) for cpu in sorted(chosen))

    @property
    def procs_files(self) -> list[str]:
        return sorted({str(path / "cgroup.procs") for path in self.dirs.values()})

    def pids(self) -> list[int]:
        text = _read(self.dirs["pids"] / "cgroup.procs")
        return [int(pid) for pid in text.split()]

    def kill_all(self, patience_s: float = 5.0) -> None:
        """SIGKILL every process in the sandbox, until none is left."""
        if self.v2 and (self.dirs["pids"] / "cgroup.kill").exists():
            with contextlib.suppress(SandboxError):
                _write(self.dirs["pids"] / "cgroup.kill", "1")
        deadline = time.monotonic() + patience_s
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for path in set(self.dirs.values()):
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)

    # --- what happened ------------------------------------------------------------
    def events(self) -> dict[str, int]:
        """Cumulative counts of the limits being hit: processes killed for memory and
        forks refused at the process limit."""
        return limit_events(self.dirs["memory"], self.dirs["pids"], self.v2)


def limit_events(memory_dir: Path, pids_dir: Path, v2: bool) -> dict[str, int]:
    """The limit counters of a group (ours, or a Docker container's)."""
    oom = memory_dir / ("memory.events" if v2 else "memory.oom_control")
    forks = _counter(pids_dir / "pids.events", "max")
    return {"memory": _counter(oom, "oom_kill"), "processes": forks}


def groups_of(pid: int) -> tuple[Path, Path, bool] | None:
    """The memory and pids group directories of process `pid` and whether they are v2,
    from /proc/<pid>/cgroup (None when it cannot be read)."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    paths: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            paths[name] = path.lstrip("/")
    if unified() and "" in paths:
        group = ROOT / paths[""]
        return group, group, True
    if "memory" in paths and "pids" in paths:
        return ROOT / "memory" / paths["memory"], ROOT / "pids" / paths["pids"], False
    return None
