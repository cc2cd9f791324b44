"""The dispatcher: tasks in, scored and durable attempts out, within budgets.

Its own loop (not ray.util.ActorPool), because it has to do what a pool does not:

- bounded work on the head: a few tasks generated ahead (PREFETCH_PER_GENERATOR per
  generator), each task's staged bytes handed to its sandbox actor and freed on the
  head at once (episode_actor.deliver), so what the head holds per episode in flight
  is a few hundred bytes of bookkeeping whatever the files weigh;
- completions reach the loop through callbacks on a queue, never by scanning what is
  in flight, so ten thousand episodes in flight cost what ten do per completion;
- a retry budget per failure class (sandbox errors and transient model errors are
  retried, an agent error or a missing submission never) and a cap over the whole
  run; every attempt is recorded, retried or final. A timeout is retried at most once,
  and only when the runner held the time (the episode loop did not come back from
  the sandbox or the actor): an agent whose own turns or tools ran out the budget
  gets no second one;
- dead sandbox actors replaced and their episodes dispatched again: class `node_lost`
  when the actor's node died or stopped answering (outside the run's cap), `lost`
  otherwise;
- the episode deadline watched from outside: an actor that has not returned an
  episode well past its budget is killed, the episode recorded as a timeout.

This module is the one place that catches Ray's failures.
"""

from __future__ import annotations

import contextlib
import math
import queue
import secrets
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import ray
import ray.exceptions

from causal_gym.errors import GenerationError
from orchestrator.agents.types import EpisodeConfig, EpisodeResult
from orchestrator.errors import DispatchError
from orchestrator.host.private_state import state_root
from orchestrator.records.types import Attempt, FailureClass, Progress
from orchestrator.run.config import HEAD_RESOURCE, RunConfig
from orchestrator.run.episode_actor import WIND_DOWN_S, EpisodeSpec, actor_class
from orchestrator.run.head_actors import Recorder, TaskGenerator
from orchestrator.run.nodes import NodeWatch
from orchestrator.run.slots import ActorSlots, RetryPolicy, Slot, classify

#: Past the actor's own watchdog (budget + WIND_DOWN_S), how long the driver waits
#: before it declares the actor wedged and kills it.
OUTER_GRACE_S = 30.0
ACTOR_READY_S = 120.0
#: Tasks generated ahead of a free slot, per generator: enough that a slot never waits
#: for generation, few enough that the head holds no backlog of staged bytes.
PREFETCH_PER_GENERATOR = 8
_HEAD = {HEAD_RESOURCE: 0.001}


@dataclass
class Made:
    """A task generated ahead: its wire waits in the head's object store."""

    task_id: str
    attempt: int
    generator: int
    handle: str
    wire: Any  # the ObjectRef of the TaskWire


@dataclass
class InFlight:
    task_id: str
    attempt: int
    generator: int
    slot: Slot | None
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
        self._next_tick = 0.0
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
                tool_output_chars=config.tool_output_chars,
            ),
        )
        head = {"num_cpus": 0, "resources": _HEAD, "max_restarts": 0}
        self.generators: list[Any] = [
            ray.remote(TaskGenerator).options(**head).remote(key_path, fingerprint)
            for _ in range(config.generators)
        ]
        recorder_args = (fingerprint, str(config.out), run_id, config_digest, config.sandbox)
        self.recorder: Any = (
            ray.remote(Recorder).options(**head).remote(*recorder_args, str(state_root()))
        )
        per_actor = config.episodes_per_actor
        count = math.ceil(config.concurrency / per_actor)
        self.actor_cls = actor_class(config.cpus_per_episode * per_actor, per_actor)
        self.nodes = NodeWatch()
        self.slots = ActorSlots(self._new_actor, count, per_actor)
        self.prefetch = min(config.concurrency, PREFETCH_PER_GENERATOR * config.generators)
        self._next_generator = 0
        #: Completed refs' keys with their outcome, put there by Ray's callback thread.
        self.done: queue.SimpleQueue[tuple[bytes, Future[Any]]] = queue.SimpleQueue()
        self.generating: dict[bytes, Made] = {}
        self.ready: deque[Made] = deque()
        self.episodes: dict[bytes, InFlight] = {}
        #: Episodes in dispatch order: they share one deadline, so the oldest is first.
        self.deadlines: deque[tuple[float, bytes]] = deque()
        self.scoring: dict[bytes, InFlight] = {}

    def _new_actor(self) -> Any:
        actor = self.actor_cls.remote(self.spec)
        self.nodes.place(actor)
        return actor

    def _watch(self, ref: Any) -> bytes:
        """Have the outcome of `ref` queued when it completes; returns the key the
        loop's tables use (the ref's id: holding the ref itself would keep its result
        alive in the object store as long as the tables remember it)."""
        key = bytes(ref.binary())
        ref.future().add_done_callback(lambda outcome: self.done.put((key, outcome)))
        return key

    # --- setup ---------------------------------------------------------------------
    def wait_ready(self) -> dict[str, Any]:
        """Every actor placed and answering, or a clear error before any work."""
        head = [g.ready.remote() for g in self.generators] + [self.recorder.ready.remote()]
        try:
            head_nodes = ray.get(head, timeout=ACTOR_READY_S)
            where = self.nodes.wait_placed(self.slots.actors, ACTOR_READY_S)
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
        while self.pending or self.generating or self.ready or self.episodes or self.scoring:
            self._generate_ahead()
            self._fill()
            for key, outcome in self._completed(timeout=0.25):
                if key in self.generating:
                    self._generated(self.generating.pop(key), outcome)
                elif key in self.episodes:
                    self._episode_done(self.episodes.pop(key), outcome)
                elif key in self.scoring:  # (an episode stopped from outside: ignored)
                    self._scored(self.scoring.pop(key), outcome)
            self._watch_deadlines()
            self._tick()
        return self.tally

    def _tick(self) -> None:
        """The view once a second even when nothing finishes (a run of long episodes
        finishes none for its first episode's length, and its view must still move)."""
        now = time.monotonic()
        if now >= self._next_tick:
            self._next_tick = now + 1.0
            self.on_progress(self.tally, None)

    def _completed(self, timeout: float) -> list[tuple[bytes, Future[Any]]]:
        """What finished: waits for the first completion (at most `timeout`), then
        takes every other one already there."""
        try:
            found = [self.done.get(timeout=timeout)]
        except queue.Empty:
            return []
        with contextlib.suppress(queue.Empty):
            while True:
                found.append(self.done.get_nowait())
        return found

    def _generate_ahead(self) -> None:
        """Keep the next tasks generating while the current ones run, so a free slot
        gets its task at once (generation is off the episodes' critical path)."""
        while self.pending and len(self.generating) + len(self.ready) < self.prefetch:
            task_id, attempt = self.pending.popleft()
            index = self._next_generator % len(self.generators)
            self._next_generator += 1
            handle = secrets.token_urlsafe(12)
            note, wire = (
                self.generators[index].generate.options(num_returns=2).remote(task_id, handle)
            )
            self.generating[self._watch(note)] = Made(task_id, attempt, index, handle, wire)

    def _generated(self, made: Made, outcome: Future[Any]) -> None:
        try:
            outcome.result()
        except ray.exceptions.RayTaskError as exc:
            if not isinstance(exc.cause, GenerationError):
                raise DispatchError(f"a task generator failed: {_cause(exc)}") from exc
            slot = InFlight(made.task_id, made.attempt, made.generator, None, time.monotonic())
            self._settle(slot, FailureClass.GENERATION_ERROR, None, _cause(exc))
            return
        except ray.exceptions.RayError as exc:
            raise DispatchError(
                f"a task generator died ({_cause(exc)}); every recorded episode is on disk: "
                "rerun with --resume"
            ) from exc
        self.ready.append(made)

    def _fill(self) -> None:
        while self.ready and len(self.episodes) < self.config.concurrency:
            slot = self.slots.take()
            if slot is None:
                break
            made = self.ready.popleft()
            slot.actor.deliver.remote(made.wire)  # the head's copy is freed when it returns
            key = self._watch(slot.actor.play.remote(made.handle))
            now = time.monotonic()
            self.episodes[key] = InFlight(made.task_id, made.attempt, made.generator, slot, now)
            self.deadlines.append((now, key))
        self.tally.running = len(self.episodes)

    def _episode_done(self, slot: InFlight, outcome: Future[Any]) -> None:
        assert slot.slot is not None
        self.slots.give_back(slot.slot)
        result: EpisodeResult | None = None
        message: str | None = None
        try:
            result = outcome.result()
            failure = classify(result)
        except ray.exceptions.RayActorError as exc:
            lost_node = self.nodes.lost(slot.slot.actor, exc)
            self.slots.replace(slot.slot)
            if lost_node:
                failure, message = FailureClass.NODE_LOST, f"its node was lost: {lost_node}"
            else:
                failure, message = FailureClass.LOST, f"the sandbox actor died: {_cause(exc)}"
        except ray.exceptions.RayError as exc:
            failure, message = FailureClass.LOST, _cause(exc)
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
        scored = None
        if failure is not FailureClass.GENERATION_ERROR:
            submission = result.submission if result is not None else None
            generator = self.generators[slot.generator]
            scored = generator.score.remote(slot.task_id, submission)
        self.scoring[self._watch(self.recorder.record.remote(attempt, scored))] = slot

    def _scored(self, slot: InFlight, outcome: Future[Any]) -> None:
        try:
            progress: Progress = outcome.result()
        except ray.exceptions.RayError as exc:
            raise DispatchError(
                f"the recorder or a generator failed ({_cause(exc)}); every recorded "
                "episode is on disk: rerun with --resume"
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
        while self.deadlines and now - self.deadlines[0][0] > limit:
            _, key = self.deadlines.popleft()
            slot = self.episodes.pop(key, None)
            if slot is None or slot.slot is None:
                continue  # it came back in time
            # the actor's own watchdog did not return: it is wedged
            self.slots.replace(slot.slot)
            message = f"stopped from outside: no result {limit:g} s after dispatch"
            self._settle(slot, FailureClass.TIMEOUT, None, message)
        self.tally.running = len(self.episodes)

    def shutdown(self) -> None:
        """Close the result files and stop every actor (their sandboxes die with them;
        the reaper removes what they leave)."""
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(self.recorder.close.remote(), timeout=30)
        self.slots.kill_all()
        for actor in [*self.generators, self.recorder]:
            try:
                ray.kill(actor, no_restart=True)
            except ray.exceptions.RayError:
                continue


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    text = f"{type(cause).__name__}: {cause}".splitlines()[0]
    return text[:300]
