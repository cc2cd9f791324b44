"""The run's live view where no terminal is: plain lines, at most one per interval,
always the last one."""

from __future__ import annotations

import io

from rich.console import Console

from orchestrator.run.dispatcher import Tally
from orchestrator.run.display import LiveView


def _view(every_s: float) -> tuple[LiveView, io.StringIO]:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, width=200)
    return LiveView(console, 4, "reference on eval-v1", every_s=every_s), sink


def test_plain_lines_are_throttled_and_the_end_is_always_printed() -> None:
    view, sink = _view(every_s=3600)
    with view:
        view.update(Tally(total=4, running=4), None)  # the first: printed
        for done in range(1, 4):  # within the interval: not printed
            view.update(Tally(total=4, done=done, running=4 - done, reward_sum=0.5), None)
        view.update(Tally(total=4, done=4, reward_sum=2.0), None)  # the end: printed
        view.update(Tally(total=4, done=4, reward_sum=2.0), None)  # once
    lines = sink.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("reference on eval-v1: 0/4 done  running 4  retried 0")
    assert "mean reward -" in lines[0] and "ETA ?" in lines[0]
    assert lines[1].startswith("reference on eval-v1: 4/4 done  running 0")
    assert "mean reward +0.500" in lines[1] and "ETA 0:00:00" in lines[1]


def test_plain_lines_come_every_interval() -> None:
    view, sink = _view(every_s=0)
    with view:
        for done in range(3):
            view.update(Tally(total=4, done=done, running=1), None)
    assert [line.split(":")[1] for line in sink.getvalue().splitlines()] == [
        " 0/4 done  running 1  retried 0  failed 0  mean reward -  elapsed 0",
        " 1/4 done  running 1  retried 0  failed 0  mean reward +0.000  elapsed 0",
        " 2/4 done  running 1  retried 0  failed 0  mean reward +0.000  elapsed 0",
    ]


def test_a_terminal_gets_the_bar_not_lines() -> None:
    sink = io.StringIO()
    console = Console(file=sink, force_terminal=True, width=200)
    view = LiveView(console, 4, "reference on eval-v1", every_s=0)
    assert not view.plain
    with view:
        view.update(Tally(total=4, done=4, reward_sum=2.0), None)
    assert "4/4" in sink.getvalue() and "4/4 done" not in sink.getvalue()
