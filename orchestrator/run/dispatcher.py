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
from orchestrator.agents.types import EpisodeConfig, EpisodeResult, EpisodeStatus
from orchestrator.errors import OrchestratorError
from orchestrator.run.config import HEAD_RESOURCE, RunConfig
from orchestrator.run.episode_actor import WIND_DOWN_S, EpisodeSpec, actor_class
from orchestrator.run.head_actors import Scorer, TaskGenerator
from orchestrator.run.records import FailureClass, Progress

#: Past the actor's own watchdog (budget + WIND_DOWN_S), how long the driver waits
#: before it declares the actor wedged and kills it.
OUTER_GRACE_S = 30.0
ACTOR_READY_S = 120.0
_HEAD = {HEAD_RESOURCE: 0.001}


class DispatchError(OrchestratorError):
    """Raised when a run cannot go on (no actor could be placed, the scorer died)."""


@dataclass
class InFlight:
    task_id: str
    attempt: int
    actor: int
    handle: Any  # the actor it runs on (an index may since hold a replacement)
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


def classify(result: EpisodeResult) -> FailureClass | None:
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
        self.retries_used: dict[str, dict[str, int]] = {}
        n = len(task_ids)
        self.retry_cap = (
            config.retries.total if config.retries.total is not None else max(10, n // 10)
        )
        self.retries_total = 0
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
        self.slots = config.episodes_per_actor
        count = math.ceil(config.concurrency / self.slots)
        self.actor_cls = actor_class(config.cpus_per_episode * self.slots, self.slots)
        self.actors: list[Any] = [self._new_actor() for _ in range(count)]
        self.load = [0] * count
        self.episodes: dict[Any, InFlight] = {}
        self.scoring: dict[Any, InFlight] = {}
        self._next_generator = 0
        self.prefetched: deque[tuple[str, int, Any]] = deque()

    # --- setup ---------------------------------------------------------------------
    def _new_actor(self) -> Any:
        return self.actor_cls.remote(self.spec)

    def wait_ready(self) -> dict[str, Any]:
        """Every actor placed and answering, or a clear error before any work."""
        head = [g.ready.remote() for g in self.generators] + [self.scorer.ready.remote()]
        workers = [a.where.remote() for a in self.actors]
        try:
            head_nodes = ray.get(head, timeout=ACTOR_READY_S)
            where = ray.get(workers, timeout=ACTOR_READY_S)
        except ray.exceptions.GetTimeoutError as exc:
            raise DispatchError(
                f"the cluster could not place {len(self.actors)} sandbox actors of "
                f"{self.config.cpus_per_episode * self.slots:g} CPUs each within "
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
            actor = min(range(len(self.actors)), key=lambda i: self.load[i])
            if self.load[actor] >= self.slots:
                return
            task_id, attempt, wire = self.prefetched.popleft()
            ref = self.actors[actor].run.remote(wire)
            self.episodes[ref] = InFlight(
                task_id, attempt, actor, self.actors[actor], time.monotonic()
            )
            self.load[actor] += 1
        self.tally.running = len(self.episodes)

    def _episode_done(self, ref: Any, slot: InFlight) -> None:
        if self.actors[slot.actor] is slot.handle:
            self.load[slot.actor] -= 1
        result: EpisodeResult | None = None
        message: str | None = None
        try:
            result = ray.get(ref)
            failure = classify(result)
        except ray.exceptions.RayActorError as exc:
            self._replace(slot)
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
        retry = (
            failure is not None
            and retryable(failure, result)
            and self._may_retry(slot.task_id, failure)
        )
        if retry:
            self.pending.appendleft((slot.task_id, slot.attempt + 1))
            self.tally.retried += 1
        latency = time.monotonic() - slot.dispatched
        overhead = max(0.0, latency - (result.wall_s if result else 0.0))
        ref = self.scorer.record.remote(
            slot.task_id,
            slot.attempt,
            not retry,
            failure,
            retry,
            result,
            self.spec.agent,
            overhead,
            message,
        )
        self.scoring[ref] = slot

    def _may_retry(self, task_id: str, failure: FailureClass) -> bool:
        used = self.retries_used.setdefault(task_id, {})
        if used.get(failure.value, 0) >= self.config.retries.budget(failure.value):
            return False
        if self.retries_total >= self.retry_cap:
            return False
        used[failure.value] = used.get(failure.value, 0) + 1
        self.retries_total += 1
        return True

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
                self._replace(slot)
                message = f"stopped from outside: no result {limit:g} s after dispatch"
                self._settle(slot, FailureClass.TIMEOUT, None, message)
        self.tally.running = len(self.episodes)

    def _replace(self, slot: InFlight) -> None:
        """Kill the actor `slot` ran on and put a new one in its place (once: the
        other episodes it held come back lost and find it already replaced)."""
        if self.actors[slot.actor] is not slot.handle:
            return
        with contextlib.suppress(ray.exceptions.RayError):  # already gone
            ray.kill(slot.handle, no_restart=True)
        self.actors[slot.actor] = self._new_actor()
        self.load[slot.actor] = 0

    def shutdown(self) -> None:
        """Close the result files and stop every actor (their sandboxes die with them;
        the reaper removes what they leave)."""
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(self.scorer.close.remote(), timeout=30)
        for actor in [*self.actors, *self.generators, self.scorer]:
            try:
                ray.kill(actor, no_restart=True)
            except ray.exceptions.RayError:
                continue


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    text = f"{type(cause).__name__}: {cause}".splitlines()[0]
    return text[:300]
