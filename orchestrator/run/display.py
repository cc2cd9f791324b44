"""The live view of a run: done, running, retried, failed, mean reward so far, ETA."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.run.dispatcher import Tally
from orchestrator.run.records import Progress as EpisodeProgress


class LiveView:
    def __init__(self, console: Console, total: int, label: str) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            console=console,
            refresh_per_second=4,
        )
        self.job = self.progress.add_task(label, total=total, status="starting", eta="?")
        self.started = time.monotonic()

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
        elapsed = time.monotonic() - self.started
        eta = "?"
        if tally.done:
            left = (tally.total - tally.done) * elapsed / tally.done
            eta = time.strftime("%H:%M:%S", time.gmtime(left))
        self.progress.update(self.job, completed=tally.done, status=status, eta=eta)
