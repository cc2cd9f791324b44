"""The dispatcher: tasks in, scored and durable attempts out, within budgets.

Its own loop (not ray.util.ActorPool), because it has to do what a pool does not:

- bounded work in flight (`concurrency` episodes, each with its task generated just
  before it runs, so nothing piles up on the head);
- a retry budget per failure class (sandbox errors and transient model errors are
  retried, an agent error or a missing submission never) and a cap over the whole
  run; every attempt is recorded, retried or final. A timeout is retried at most once,
  and only when the runner held the time (the episode loop did not come back from
  the sandbox or the actor): an agent whose own turns or tools ran out the budget
  gets no second one;
- dead sandbox actors replaced and their episodes dispatched again (class `lost`);
- the episode deadline watched from outside: an actor that has not returned an
  episode well past its budget is killed, the episode recorded as a timeout.

This module is the one place that catches Ray's failures.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ray
import ray.exceptions

from causal_gym.errors import GenerationError
from orchestrator.agents.types import EpisodeConfig, EpisodeResult
from orchestrator.errors import DispatchError
from orchestrator.run.config import HEAD_RESOURCE, RunConfig
from orchestrator.run.episode_actor import WIND_DOWN_S, EpisodeSpec, actor_class
from orchestrator.run.head_actors import Scorer, TaskGenerator
from orchestrator.run.records import Attempt, FailureClass, Progress
from orchestrator.run.slots import ActorSlots, RetryPolicy, Slot, classify

#: Past the actor's own watchdog (budget + WIND_DOWN_S), how long the driver waits
#: before it declares the actor wedged and kills it.
OUTER_GRACE_S = 30.0
ACTOR_READY_S = 120.0
_HEAD = {HEAD_RESOURCE: 0.001}


@dataclass
class InFlight:
    task_id: str
    attempt: int
    slot: Slot
    dispatched: float


@dataclass
class Tally:
    """Counts for the live display (the report recomputes everything from disk)."""

    total: int
    done: int = 0
    running: int = 0
    retried: int = 0
    failed: int = 0
    reward_sum: float = 0.0
    started: float = field(default_factory=time.monotonic)
    by_class: dict[str, int] = field(default_factory=dict)

    @property
    def mean_reward(self) -> float | None:
        return self.reward_sum / self.done if self.done else None


class Dispatcher:
    def __init__(
        self,
        config: RunConfig,
        run_id: str,
        key_path: str,
        fingerprint: str,
        config_digest: str,
        task_ids: list[str],
        attempts_done: dict[str, int],
        on_progress: Callable[[Tally, Progress | None], None] = lambda tally, progress: None,
    ) -> None:
        self.config = config
        self.run_id = run_id
        self.pending: deque[tuple[str, int]] = deque(
            (task_id, attempts_done.get(task_id, 0)) for task_id in task_ids
        )
        self.tally = Tally(total=len(task_ids))
        self.on_progress = on_progress
        self.retries = RetryPolicy.for_tasks(config.retries, len(task_ids))
        self.spec = EpisodeSpec(
            run_id=run_id,
            agent=config.agent,
            openai=config.openai,
            sandbox=config.sandbox,
            image=config.image,
            limits=config.limits.model_dump(),
            episode=EpisodeConfig(
                max_turns=config.max_turns,
                episode_timeout_s=config.episode_timeout_s,
                tool_timeout_s=min(config.tool_timeout_s, config.episode_timeout_s),
            ),
        )
        head = {"num_cpus": 0, "resources": _HEAD, "max_restarts": 0}
        self.generators: list[Any] = [
            ray.remote(TaskGenerator).options(**head).remote(key_path, fingerprint)
            for _ in range(config.generators)
        ]
        self.scorer: Any = (
            ray.remote(Scorer)
            .options(**head)
            .remote(key_path, fingerprint, str(config.out), run_id, config_digest, config.sandbox)
        )
        per_actor = config.episodes_per_actor
        count = math.ceil(config.concurrency / per_actor)
        self.actor_cls = actor_class(config.cpus_per_episode * per_actor, per_actor)
        self.slots = ActorSlots(lambda: self.actor_cls.remote(self.spec), count, per_actor)
        self.episodes: dict[Any, InFlight] = {}
        self.scoring: dict[Any, InFlight] = {}
        self._next_generator = 0
        self.prefetched: deque[tuple[str, int, Any]] = deque()

    # --- setup ---------------------------------------------------------------------
    def wait_ready(self) -> dict[str, Any]:
        """Every actor placed and answering, or a clear error before any work."""
        head = [g.ready.remote() for g in self.generators] + [self.scorer.ready.remote()]
        workers = [a.where.remote() for a in self.slots.actors]
        try:
            head_nodes = ray.get(head, timeout=ACTOR_READY_S)
            where = ray.get(workers, timeout=ACTOR_READY_S)
        except ray.exceptions.GetTimeoutError as exc:
            raise DispatchError(
                f"the cluster could not place {len(self.slots.actors)} sandbox actors of "
                f"{self.config.cpus_per_episode * self.slots.per_actor:g} CPUs each within "
                f"{ACTOR_READY_S:g} s: lower --concurrency or add nodes"
            ) from exc
        except ray.exceptions.RayActorError as exc:
            raise DispatchError(f"a head actor failed to start: {_cause(exc)}") from exc
        return {"head": sorted(set(head_nodes)), "workers": where}

    # --- the loop ------------------------------------------------------------------
    def run(self) -> Tally:
        while self.pending or self.prefetched or self.episodes or self.scoring:
            self._fill()
            refs = list(self.episodes) + list(self.scoring)
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.25) if refs else ([], [])
            for ref in ready:
                if ref in self.episodes:
                    self._episode_done(ref, self.episodes.pop(ref))
                else:
                    self._scored(ref, self.scoring.pop(ref))
            self._watch_deadlines()
        return self.tally

    def _prefetch(self) -> None:
        """Keep the next tasks generating while the current ones run, so a free slot
        gets its task at once (generation is off the episodes' critical path)."""
        while self.pending and len(self.prefetched) < self.config.concurrency:
            task_id, attempt = self.pending.popleft()
            handle = secrets.token_urlsafe(12)
            generator = self.generators[self._next_generator % len(self.generators)]
            self._next_generator += 1
            self.prefetched.append((task_id, attempt, generator.generate.remote(task_id, handle)))

    def _fill(self) -> None:
        self._prefetch()
        while self.prefetched and len(self.episodes) < self.config.concurrency:
            slot = self.slots.take()
            if slot is None:
                return
            task_id, attempt, wire = self.prefetched.popleft()
            ref = slot.actor.run.remote(wire)
            self.episodes[ref] = InFlight(task_id, attempt, slot, time.monotonic())
        self.tally.running = len(self.episodes)

    def _episode_done(self, ref: Any, slot: InFlight) -> None:
        self.slots.give_back(slot.slot)
        result: EpisodeResult | None = None
        message: str | None = None
        try:
            result = ray.get(ref)
            failure = classify(result)
        except ray.exceptions.RayActorError as exc:
            self.slots.replace(slot.slot)
            failure, message = FailureClass.LOST, f"the sandbox actor died: {_cause(exc)}"
        except ray.exceptions.RayTaskError as exc:
            generation = isinstance(exc.cause, GenerationError)
            failure = FailureClass.GENERATION_ERROR if generation else FailureClass.LOST
            message = _cause(exc)
        self._settle(slot, failure, result, message)

    def _settle(
        self,
        slot: InFlight,
        failure: FailureClass | None,
        result: EpisodeResult | None,
        message: str | None,
    ) -> None:
        retry = self.retries.allow(slot.task_id, failure, result)
        if retry:
            self.pending.appendleft((slot.task_id, slot.attempt + 1))
            self.tally.retried += 1
        latency = time.monotonic() - slot.dispatched
        overhead = max(0.0, latency - (result.wall_s if result else 0.0))
        attempt = Attempt(
            task_id=slot.task_id,
            attempt=slot.attempt,
            failure_class=failure,
            retried=retry,
            result=result,
            agent=self.spec.agent,
            overhead_s=overhead,
            message=message,
        )
        self.scoring[self.scorer.record.remote(attempt)] = slot

    def _scored(self, ref: Any, slot: InFlight) -> None:
        try:
            progress: Progress = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise DispatchError(
                f"the scorer failed ({_cause(exc)}); every recorded episode is on disk: "
                "rerun with --resume"
            ) from exc
        if progress.final:
            self.tally.done += 1
            self.tally.reward_sum += progress.reward
            if progress.failure_class is not None:
                self.tally.failed += 1
        if progress.failure_class is not None:
            name = progress.failure_class.value
            self.tally.by_class[name] = self.tally.by_class.get(name, 0) + 1
        self.on_progress(self.tally, progress)

    def _watch_deadlines(self) -> None:
        limit = self.config.episode_timeout_s + WIND_DOWN_S + OUTER_GRACE_S
        now = time.monotonic()
        for ref, slot in list(self.episodes.items()):
            if now - slot.dispatched > limit:
                # the actor's own watchdog did not return: it is wedged
                self.episodes.pop(ref)
                self.slots.replace(slot.slot)
                message = f"stopped from outside: no result {limit:g} s after dispatch"
                self._settle(slot, FailureClass.TIMEOUT, None, message)
        self.tally.running = len(self.episodes)

    def shutdown(self) -> None:
        """Close the result files and stop every actor (their sandboxes die with them;
        the reaper removes what they leave)."""
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(self.scorer.close.remote(), timeout=30)
        self.slots.kill_all()
        for actor in [*self.generators, self.scorer]:
            try:
                ray.kill(actor, no_restart=True)
            except ray.exceptions.RayError:
                continue


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    text = f"{type(cause).__name__}: {cause}".splitlines()[0]
    return text[:300]
