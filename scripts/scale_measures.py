"""How a `bench_run.py scale` run filled its slots and how full it kept them, from its
records (the throughput ratio itself, episodes per second over concurrency / mean
episode time, is bench_run.py's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Share of the slots that must be busy for a moment to count as "full".
FULL = 0.98


@dataclass(frozen=True)
class Occupancy:
    """How the run filled its slots and how full it kept them."""

    fill_s: float  # first dispatch to the first moment FULL of the slots were busy
    held_s: float  # from then to the last dispatch (while tasks were left to give out)
    busy_share: float  # busy slot-seconds over concurrency x held_s


def busy_intervals(records: Sequence[Any]) -> list[tuple[float, float]]:
    """Each attempt's slot time: from its dispatch (its end, less its own wall time
    and the runner's overhead) to its end."""
    return [
        (r.finished_at - r.wall_s - r.overhead_s, r.finished_at)
        for r in records
        if r.finished_at > 0
    ]


def occupancy(records: Sequence[Any], concurrency: int, full: float = FULL) -> Occupancy:
    """The fill, then how busy the slots stayed while there were tasks to dispatch.

    A run whose episodes all start within the fill moves in waves (each finished
    episode's slot is given the next task at once, so the next round starts as the
    first one ended), and no stretch of it is stationary: the rate inside any window
    says more about the waves than about the runner. What the runner controls is how
    fast it fills the slots (task generation) and whether it keeps them full after."""
    intervals = busy_intervals(records)
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    first_dispatch = min(a for a, _ in intervals)
    last_dispatch = max(a for a, _ in intervals)
    level, full_at = 0, None
    for moment, step in events:
        level += step
        if full_at is None and level >= full * concurrency:
            full_at = moment
    if full_at is None or last_dispatch <= full_at:
        return Occupancy(0.0, 0.0, 0.0)
    busy = sum(max(0.0, min(b, last_dispatch) - max(a, full_at)) for a, b in intervals)
    held = last_dispatch - full_at
    return Occupancy(full_at - first_dispatch, held, busy / (concurrency * held))


def wave_widths(records: Sequence[Any], concurrency: int) -> tuple[float, ...]:
    """How long each wave of `concurrency` episode ends took, first end to last: the
    first is about the fill; a wave wider than the one before is a head that replaced
    finished episodes more slowly than the fill handed out the first ones."""
    ends = sorted(r.finished_at for r in records if r.final and r.finished_at > 0)
    return tuple(
        ends[i + concurrency - 1] - ends[i]
        for i in range(0, len(ends) - concurrency + 1, concurrency)
    )
