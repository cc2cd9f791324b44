"""What `bench_run.py scale` measures beyond the records: the head's memory while the
run lasts, and the throughput while every slot is busy.

Memory. RSS counts a shared page once in every process that maps it (Ray's object
store is one shared mapping), so the sum of RSS over processes overstates what they
hold together. The sampler records both: the RSS of the driver and the head actors
(the figure earlier measurements quoted) and the PSS (each shared page divided among
its sharers) of every process on the head node, Ray's own daemons included.

Throughput. A run's first minutes fill the slots (every task generated for the first
time) and its last ones drain them, so the rate over the whole run understates what
the runner sustains. `steady_window` finds the stretch in which at least FULL of the
slots were busy and counts the episodes that finished inside it; its ideal is
concurrency / mean episode time (Little's law with every slot busy).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Share of the slots that must be busy for a moment to count as "full".
FULL = 0.98
HEAD_TITLES = (b"ray::TaskGenerator", b"ray::Recorder")


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def _pids() -> Iterable[int]:
    return (int(e) for e in os.listdir("/proc") if e.isdigit())


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class HeadSampler:
    """Peak memory of the head while it runs, sampled every `period` seconds.

    `head_session` is the session of the head's `ray start` (a cluster's head node);
    None means an embedded Ray, whose processes all descend from the driver."""

    def __init__(self, head_session: int | None, period: float = 2.0) -> None:
        self.driver = os.getpid()
        self.head_session = head_session
        self.period = period
        self.peak_rss_mb = 0.0  # driver + generators + recorder
        self.peak_pss_mb = 0.0  # every process of the head node
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _on_head(self, pid: int, parents: dict[int, int], sessions: dict[int, int]) -> bool:
        if pid == self.driver:
            return True
        if self.head_session is not None and sessions.get(pid) == self.head_session:
            return True
        current = parents.get(pid)
        while current and current > 1:
            if current == self.driver:
                return True
            current = parents.get(current)
        return False

    def sample(self) -> None:
        parents: dict[int, int] = {}
        sessions: dict[int, int] = {}
        for pid in _pids():
            fields = _stat(pid)
            if fields is not None:
                parents[pid], sessions[pid] = int(fields[1]), int(fields[3])
        rss = pss = 0
        for pid in parents:
            if not self._on_head(pid, parents, sessions):
                continue
            pss += _pss_kb(pid)
            if pid == self.driver or _cmdline(pid).startswith(HEAD_TITLES):
                rss += _status_kb(pid, "VmRSS")
        self.peak_rss_mb = max(self.peak_rss_mb, rss / 1024)
        self.peak_pss_mb = max(self.peak_pss_mb, pss / 1024)

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()

    def __enter__(self) -> HeadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class Window:
    start: float
    end: float
    finished: int  # episodes that ended inside it

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def rate(self) -> float:
        return self.finished / self.seconds if self.seconds > 0 else 0.0


def busy_intervals(records: Sequence[Any]) -> list[tuple[float, float]]:
    """Each attempt's slot time: from its dispatch (its end, less its own wall time
    and the runner's overhead) to its end."""
    return [
        (r.finished_at - r.wall_s - r.overhead_s, r.finished_at)
        for r in records
        if r.finished_at > 0
    ]


def steady_window(records: Sequence[Any], concurrency: int, full: float = FULL) -> Window:
    """The stretch from the first moment at least `full` of the slots were busy to the
    last such moment, and the attempts that ended inside it."""
    events = sorted(
        [(start, 1) for start, _ in busy_intervals(records)]
        + [(end, -1) for _, end in busy_intervals(records)]
    )
    level, first, last = 0, None, None
    need = full * concurrency
    for moment, step in events:
        level += step
        if level >= need:
            if first is None:
                first = moment
            last = moment
        elif first is not None and step == -1 and level + 1 >= need:
            last = moment  # the moment it dropped below full
    if first is None or last is None or last <= first:
        return Window(0.0, 0.0, 0)
    ends = [end for _, end in busy_intervals(records)]
    return Window(first, last, sum(first < end <= last for end in ends))
