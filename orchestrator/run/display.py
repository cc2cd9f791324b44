"""The live view of a run: done, running, retried, failed, mean reward so far, ETA.

On a terminal it is a progress bar. Anywhere else (a log file, a CI job, `nohup`) rich
draws nothing until the end, so the same figures go out as one plain line every
`PLAIN_EVERY_S` seconds and at the end: a two-hour run written to a log still shows
how far it is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.records.types import Progress as EpisodeProgress
from orchestrator.run.dispatcher import Tally

PLAIN_EVERY_S = 30.0


class LiveView:
    def __init__(
        self, console: Console, total: int, label: str, every_s: float = PLAIN_EVERY_S
    ) -> None:
        self.console, self.label, self.every_s = console, label, every_s
        self.plain = not console.is_terminal
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            console=console,
            refresh_per_second=4,
            disable=self.plain,
        )
        self.job = self.progress.add_task(label, total=total, status="starting", eta="?")
        self.started = time.monotonic()
        self._printed_at: float | None = None
        self._last_done = -1

    def __enter__(self) -> LiveView:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def update(self, tally: Tally, progress: EpisodeProgress | None) -> None:
        mean = "-" if tally.mean_reward is None else f"{tally.mean_reward:+.3f}"
        status = (
            f"running {tally.running}  retried {tally.retried}  failed {tally.failed}  "
            f"mean reward {mean}"
        )
        now = time.monotonic()
        elapsed = now - self.started
        eta = "?"
        if tally.done:
            left = (tally.total - tally.done) * elapsed / tally.done
            eta = _clock(left)
        if not self.plain:
            self.progress.update(self.job, completed=tally.done, status=status, eta=eta)
            return
        due = self._printed_at is None or now - self._printed_at >= self.every_s
        finished = tally.done == tally.total and tally.done != self._last_done
        if due or finished:
            self._printed_at, self._last_done = now, tally.done
            self.console.print(
                f"{self.label}: {tally.done}/{tally.total} done  {status}  "
                f"elapsed {_clock(elapsed)}  ETA {eta}",
                highlight=False,
                soft_wrap=True,
            )


def say(console: Console, sentence: str, *paths: Path | str) -> None:
    """A sentence, then each path whole on a line of its own: rich wraps long lines to
    the console's width (80 where stderr is not a terminal), and a path broken across
    lines, or run into prose, cannot be pasted. No markup: a path may hold brackets."""
    for line in (sentence, *map(str, paths)):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
