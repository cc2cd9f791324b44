"""Episode mode: the stream runs episodes against the trainer's model server and hands
back scored rollouts tagged with the policy version that produced them.

The operator points it at an OpenAI-compatible endpoint (its API key given as a value
or read from a file in the stream's endpoint-secrets folder under the rules of
secrets.py, never taken from a variable or a path the request names). A
producer on the front's event loop keeps in flight plus buffered at or under the bound
(buffer_factor x batch_size): it takes tasks from the handout like a consumer (under a
name no consumer can have), runs each on a sandbox actor anywhere in the cluster, has
its supply worker score the submission, and buffers the rollout until a consumer
pulls it. A pull drops (and counts) rollouts older than the version it accepts.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from typing import Any, Literal

from causal_gym.wire import TaskWire
from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.agents.types import EpisodeConfig, EpisodeResult, EpisodeStatus
from orchestrator.errors import StreamError
from orchestrator.records.types import FailureClass
from orchestrator.run.config import Retries
from orchestrator.run.episode_actor import WIND_DOWN_S, EpisodeSpec, actor_class
from orchestrator.run.nodes import NodeWatch
from orchestrator.run.slots import ActorSlots, RetryPolicy, Slot, classify
from orchestrator.stream.endpoint import Endpoint, EpisodeSettings
from orchestrator.stream.handout import Handout
from orchestrator.stream.secrets import EndpointSecrets
from orchestrator.stream.types import Rollout, StreamScore, score_components

#: The handout's name for episode mode's own tasks (no consumer name has parentheses).
EPISODES = "(episodes)"
__all__ = ["EPISODES", "Endpoint", "EpisodeMode", "EpisodeSettings"]
#: Past the actor's own watchdog (budget + WIND_DOWN_S), how long the producer waits
#: before it declares the actor wedged (dispatcher.OUTER_GRACE_S for runs).
OUTER_GRACE_S = 30.0


class EpisodeMode:
    def __init__(
        self,
        name: str,
        handout: Handout,
        sandbox: str = "local",
        image: str | None = None,
        concurrency: int = 8,
        episodes_per_actor: int = 8,
        cpus_per_episode: float = 0.25,
        secrets: EndpointSecrets | None = None,
    ) -> None:
        self.name, self.handout, self.secrets = name, handout, secrets
        self.sandbox, self.image = sandbox, image
        self.concurrency, self.per_actor, self.cpus = (
            concurrency,
            episodes_per_actor,
            cpus_per_episode,
        )
        self.settings: EpisodeSettings | None = None
        self._policy: OpenAIPolicyConfig | None = None
        self._slots: ActorSlots | None = None
        #: A stream runs forever, so the cap over everything is per episode: each one
        #: may be retried as its class allows (lost actors three times, ...).
        self.retries = RetryPolicy(Retries(), cap=10**12)
        self.lost = self.retried = self.nodes_lost = self.started = 0
        self.nodes: NodeWatch | None = None
        #: Slots taken (a rollout pulling its task or running); bounds production.
        self._running = 0
        #: Rollouts started and not yet buffered: the `running` of the stats, which
        #: excludes a slot still waiting for its task so started always adds up.
        self._in_flight = 0
        self._buffer: deque[Rollout] = deque()
        self._arrived = asyncio.Event()
        self._producer: asyncio.Task[None] | None = None
        self.delivered = self.stale = 0

    # --- the operator ---------------------------------------------------------------
    def configure(self, settings: EpisodeSettings) -> int:
        """Start (or re-point) production; returns the bound."""
        self._policy = settings.endpoint.policy_config(self.secrets)
        self.settings = settings
        if self._slots is None:
            count = math.ceil(self.concurrency / self.per_actor)
            cls = actor_class(self.cpus * self.per_actor, self.per_actor)
            nodes = self.nodes = NodeWatch()

            def make() -> Any:
                actor = cls.remote(self._spec())
                nodes.place(actor)
                return actor

            self._slots = ActorSlots(make, count, self.per_actor)
        if self._producer is None:
            self._producer = asyncio.get_running_loop().create_task(self._produce())
        return settings.bound

    def set_policy_version(self, version: int) -> None:
        if self.settings is None:
            raise StreamError("episode mode is not configured (the operator configures it)")
        self.settings = self.settings.model_copy(update={"policy_version": version})

    def _spec(self) -> EpisodeSpec:
        settings = self.settings
        assert settings is not None and self._policy is not None
        return EpisodeSpec(
            run_id=f"stream-{self.name}",
            agent="openai",
            openai=self._policy,
            sandbox=self.sandbox,
            image=self.image,
            episode=EpisodeConfig(
                max_turns=settings.max_turns,
                episode_timeout_s=settings.episode_timeout_s,
                tool_timeout_s=min(120.0, settings.episode_timeout_s),
                record_completions=True,
            ),
        )

    # --- production -----------------------------------------------------------------
    def _room(self) -> int:
        if self.settings is None:
            return 0
        room = self.settings.bound - self._running - len(self._buffer)
        return max(0, min(room, self.concurrency - self._running))

    async def _produce(self) -> None:
        while True:
            slot = self._slots.take() if self._room() and self._slots is not None else None
            if slot is None:
                await asyncio.sleep(0.05)
                continue
            self._running += 1
            asyncio.get_running_loop().create_task(self._one(slot))

    async def _one(self, slot: Slot) -> None:
        """One rollout: the task pulled, run on `slot` (given back when the attempt
        returns), run again on another slot while the retry policy allows, scored."""
        assert self.settings is not None and self._slots is not None
        version = self.settings.policy_version
        try:
            try:
                [made] = [m async for m in self.handout.pull(EPISODES, 1, held=True)]
            except StreamError:  # the stream's cap reached, or no worker left: later
                self._slots.give_back(slot)
                await asyncio.sleep(1.0)
                return
            except BaseException:
                self._slots.give_back(slot)
                raise
            wire = TaskWire.model_validate_json(made.line)
            self.started += 1  # from here it ends buffered (then delivered or stale)
            self._in_flight += 1
            attempts = 1
            result, failure = await self._run(slot, wire)
            while self.retries.allow(wire.handle, failure, result):
                self.retried += 1
                attempts += 1
                result, failure = await self._run(await self._next_slot(), wire)
            self.retries.forget(wire.handle)
            score: StreamScore = await self.handout.score(
                EPISODES, wire.handle, result.submission if result.submission else ""
            )
            lost = failure in (FailureClass.LOST, FailureClass.NODE_LOST)
            status = failure.value if lost and failure is not None else None
            self._buffer.append(_rollout(wire, version, result, score, attempts, status))
            self._in_flight -= 1  # the same step as the append: no await in between
            self._arrived.set()
        finally:
            self._running -= 1

    async def _next_slot(self) -> Slot:
        assert self._slots is not None
        while (slot := self._slots.take()) is None:
            await asyncio.sleep(0.05)
        return slot

    async def _run(self, slot: Slot, wire: TaskWire) -> tuple[EpisodeResult, FailureClass | None]:
        """One attempt on `slot`, which it gives back; a dead actor (class `lost`) or a
        wedged one (a runner timeout) is replaced and reported, never raised."""
        import ray

        assert self.settings is not None and self._slots is not None
        started = time.monotonic()
        limit = self.settings.episode_timeout_s + WIND_DOWN_S + OUTER_GRACE_S
        failure, message = FailureClass.SANDBOX_ERROR, ""
        cause: Literal["runner"] | None = None
        try:
            result: EpisodeResult = await asyncio.wait_for(
                slot.actor.run_with.remote(wire, self._spec()), limit
            )
            return result, classify(result)
        except ray.exceptions.RayActorError as exc:
            self.lost += 1
            node = self.nodes.lost(slot.actor, exc) if self.nodes is not None else None
            self._slots.replace(slot)
            if node is not None:
                self.nodes_lost += 1
                failure, message = FailureClass.NODE_LOST, f"its node was lost: {node}"
            else:
                failure = FailureClass.LOST
                message = f"the sandbox actor died: {str(exc).splitlines()[0][:300]}"
        except TimeoutError:
            self._slots.replace(slot)
            failure, cause = FailureClass.TIMEOUT, "runner"  # the runner held the time
            message = f"stopped from outside: no result {limit:g} s after dispatch"
        except ray.exceptions.RayError as exc:
            message = str(exc).splitlines()[0][:300]
        finally:
            self._slots.give_back(slot)
        status = (
            EpisodeStatus.TIMEOUT
            if failure is FailureClass.TIMEOUT
            else (EpisodeStatus.SANDBOX_ERROR)
        )
        result = EpisodeResult(
            handle=wire.handle,
            agent="openai",
            status=status,
            message=message,
            timeout_cause=cause,
            wall_s=time.monotonic() - started,
        )
        return result, failure

    # --- consumers ------------------------------------------------------------------
    async def pull(
        self, consumer: str, n: int, min_policy_version: int, timeout_s: float
    ) -> list[Rollout]:
        if self.settings is None:
            raise StreamError("episode mode is not configured (the operator configures it)")
        if n > self.settings.bound:
            raise StreamError(f"pull at most {self.settings.bound} rollouts (the bound), not {n}")
        deadline = time.monotonic() + timeout_s
        counts = self.handout.counts(consumer)
        while True:
            if counts.revoked:  # revoked while it waited: it gets nothing more
                raise StreamError("this consumer's token was revoked", "unauthorized")
            while self._buffer and self._buffer[0].policy_version < min_policy_version:
                self._buffer.popleft()
                self.stale += 1
            left = deadline - time.monotonic()
            if self._buffer or left <= 0:
                out = [self._buffer.popleft() for _ in range(min(n, len(self._buffer)))]
                self.delivered += len(out)
                counts.episodes += len(out)
                return out
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), timeout=left)

    def wake(self) -> None:
        """Wake the pulls that wait for rollouts (one of them was revoked)."""
        self._arrived.set()

    @property
    def running(self) -> int:
        return self._in_flight

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def stop(self) -> None:

        if self._producer is not None:
            self._producer.cancel()
        if self._slots is not None:
            self._slots.kill_all()


def _rollout(
    wire: TaskWire,
    version: int,
    result: EpisodeResult,
    score: StreamScore,
    attempts: int,
    status: str | None = None,
) -> Rollout:
    return Rollout(
        **result.stats(),
        handle=wire.handle,
        family=score.family,
        policy_version=version,
        status=status or result.status.value,
        reward_version=score.reward_version,
        reward=score.reward,
        clipped_reward=score.clipped_reward,
        components=score_components(score.model_dump()),
        messages=result.transcript,
        completions=result.completions,
        attempts=attempts,
    )
