"""Sandbox actors as slots, and the retry policy: the episode loop's parts that a run's
dispatcher and a stream's episode mode share.

- `ActorSlots` places each episode on the least-loaded actor that has room, takes the
  slot back when the episode returns, and replaces an actor that died or wedged (once:
  the other episodes it held come back lost and find it already replaced).
- `RetryPolicy` decides whether a failed attempt runs again: by its failure class, the
  class's budget per task, and a cap over the whole run or stream. A timeout is retried
  at most once and only when the runner held the time.

Neither touches Ray beyond `ray.kill` on a replaced actor: catching Ray's failures is
the caller's job (dispatcher.py for runs, stream/episodes.py for streams).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator.agents.types import EpisodeResult, EpisodeStatus
from orchestrator.records.types import FailureClass
from orchestrator.run.config import Retries


@dataclass(frozen=True)
class Slot:
    """Where an episode runs: an actor's index and the actor itself (the index may hold
    a replacement by the time the episode comes back)."""

    index: int
    actor: Any


class ActorSlots:
    def __init__(self, make_actor: Callable[[], Any], count: int, per_actor: int) -> None:
        self._make = make_actor
        self.per_actor = per_actor
        self.actors: list[Any] = [make_actor() for _ in range(count)]
        self.load = [0] * count

    def take(self) -> Slot | None:
        """A slot on the least-loaded actor, or None when every actor is full."""
        index = min(range(len(self.actors)), key=lambda i: self.load[i])
        if self.load[index] >= self.per_actor:
            return None
        self.load[index] += 1
        return Slot(index, self.actors[index])

    def give_back(self, slot: Slot) -> None:
        """The episode returned (the slot's actor is current: a replaced one's count
        was reset when it was replaced)."""
        if self.actors[slot.index] is slot.actor:
            self.load[slot.index] -= 1

    def replace(self, slot: Slot) -> bool:
        """Kill the slot's actor and put a new one in its place; False when an earlier
        episode of the same actor already did."""
        import ray

        if self.actors[slot.index] is not slot.actor:
            return False
        with contextlib.suppress(Exception):  # already gone
            ray.kill(slot.actor, no_restart=True)
        self.actors[slot.index] = self._make()
        self.load[slot.index] = 0
        return True

    def kill_all(self) -> None:
        import ray

        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)


def classify(result: EpisodeResult) -> FailureClass | None:
    """An episode's failure class (None: it submitted)."""
    if result.status is EpisodeStatus.SUBMITTED:
        return None
    if result.status is EpisodeStatus.MODEL_ERROR:
        return FailureClass.MODEL_TRANSIENT if result.transient else FailureClass.MODEL_ERROR
    return FailureClass(result.status.value)


def retryable(failure: FailureClass, result: EpisodeResult | None) -> bool:
    """Whether the class's budget may be spent on this attempt at all: a timeout only
    when the runner, not the agent, held the time (the budgets decide the rest)."""
    if failure is FailureClass.TIMEOUT:
        return result is None or result.timeout_cause == "runner"
    return True


class RetryPolicy:
    """Retry budgets per failure class and task, and a cap over everything."""

    def __init__(self, budgets: Retries, cap: int) -> None:
        self.budgets = budgets
        self.cap = cap
        self.used: dict[str, dict[str, int]] = {}
        self.total = 0

    @classmethod
    def for_tasks(cls, budgets: Retries, tasks: int) -> RetryPolicy:
        """A run's policy: the configured cap, or 10% of its tasks (at least 10)."""
        cap = budgets.total if budgets.total is not None else max(10, tasks // 10)
        return cls(budgets, cap)

    def allow(self, key: str, failure: FailureClass | None, result: EpisodeResult | None) -> bool:
        """Whether `key`'s failed attempt runs again; spends the budget when it does."""
        if failure is None or not retryable(failure, result):
            return False
        used = self.used.setdefault(key, {})
        if used.get(failure.value, 0) >= self.budgets.budget(failure.value):
            return False
        capped = failure is not FailureClass.NODE_LOST  # the cluster's failure, not the run's
        if capped and self.total >= self.cap:
            return False
        used[failure.value] = used.get(failure.value, 0) + 1
        self.total += capped
        return True

    def forget(self, key: str) -> None:
        """The task is done: its budgets are no longer needed (streams run forever)."""
        self.used.pop(key, None)
