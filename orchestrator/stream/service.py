"""A stream: a named, detached head actor that owns a fresh key and an endless supply
of train-namespace tasks, for RL trainers.

The key is made here (32 random bytes) and lives only in this process; it is never
printed, logged or written, except to a 0600 file on the head when the operator asks
(`export_key`). Task ids are this actor's business: trainers see handles.

Task mode (trainers that run their own rollouts): `pull_tasks(n)` hands out public
tasks under fresh single-use handles; `score(handle, submission)` scores one and
forgets it. Handles expire (their truths are dropped), and the number outstanding is
bounded, so a trainer that disappears costs a bounded amount of memory.

Episode mode (trainers that serve their policy behind an OpenAI-compatible endpoint):
`configure(settings)` points the stream at the endpoint; a production thread runs
episodes on sandbox actors, scores them here, and buffers rollouts until the trainer
pulls them. In flight plus buffered never exceeds the bound (buffer_factor x batch
size): production waits on the consumer. `pull_episodes(n, min_policy_version)`
counts and drops rollouts of an older policy version than the consumer accepts.
"""

from __future__ import annotations

import itertools
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causal_gym.families.registry import ALL_COMPONENTS
from causal_gym.generate import generate_task
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import EpisodeScore, score_against
from causal_gym.scoring.reward import score_submission
from causal_gym.scoring.validate import Accepted, Rejected, validate_submission
from causal_gym.task import HiddenTruth
from causal_gym.task_id import FAMILIES
from causal_gym.wire import TaskWire
from orchestrator.agents.types import EpisodeConfig, EpisodeResult, EpisodeStatus
from orchestrator.errors import OrchestratorError
from orchestrator.run.episode_actor import EpisodeSpec, actor_class
from orchestrator.run.head_key import write_key_to
from orchestrator.stream.types import EpisodeSettings, Rollout, StreamScore, StreamStats

MAX_PULL = 1024
#: Tasks generated ahead of demand in task mode, so a consumer's round trips and its
#: own work overlap with generation instead of waiting for it.
PREFETCH = 64


class StreamError(OrchestratorError, ValueError):
    """Raised to a consumer for a request the stream cannot serve (an unknown, used or
    expired handle, a pull over the bound); the stream goes on serving others."""


@dataclass(frozen=True)
class Outstanding:
    truth: HiddenTruth
    columns: tuple[str, ...]
    expires: float


def _components(score: EpisodeScore) -> dict[str, float | bool | None]:
    keep = ("estimand_reward", "covered", "coverage", "width_ratio", *ALL_COMPONENTS)
    fields = score.fields()
    return {name: fields.get(name) for name in keep}


class StreamService:
    def __init__(
        self,
        name: str,
        families: tuple[str, ...] = FAMILIES,
        handle_ttl_s: float = 3600.0,
        max_outstanding: int = 10_000,
        sandbox: str = "local",
        image: str | None = None,
        concurrency: int = 8,
        episodes_per_actor: int = 8,
        cpus_per_episode: float = 0.25,
    ) -> None:
        self.name = name
        self._key = DerivationKey(secrets.token_bytes(32), f"stream {name}")
        self.families = tuple(families)
        self.handle_ttl_s, self.max_outstanding = handle_ttl_s, max_outstanding
        self.sandbox, self.image = sandbox, image
        self.concurrency, self.per_actor, self.cpus = (
            concurrency,
            episodes_per_actor,
            cpus_per_episode,
        )
        self._ids = (f"train:{f}:{i}" for i in itertools.count() for f in self.families)
        self._lock = threading.Lock()
        self._generating = threading.Lock()
        self._handles: OrderedDict[str, Outstanding] = OrderedDict()
        self._counts = {"issued": 0, "scored": 0, "expired": 0, "delivered": 0, "stale": 0}
        self._settings: EpisodeSettings | None = None
        self._buffer: deque[Rollout] = deque()
        self._running: dict[Any, tuple[str, int]] = {}
        self._episode_truths: dict[str, Outstanding] = {}
        self._actors: list[Any] = []
        self._stop = threading.Event()
        self._producer: threading.Thread | None = None
        self._ready: deque[tuple[str, TaskWire, Outstanding]] = deque()
        self._wanted = threading.Event()
        self._taken = threading.Event()
        self._prefetcher = threading.Thread(target=self._prefetch, name="prefetch", daemon=True)
        self._prefetcher.start()

    def _prefetch(self) -> None:
        """Keep PREFETCH tasks ready once task mode is in use (a handle's clock starts
        when it is handed out, not when its task was made)."""
        self._wanted.wait()
        while not self._stop.is_set():
            if len(self._ready) >= PREFETCH:
                self._taken.wait(1.0)  # woken by the next pull
                self._taken.clear()
                continue
            self._ready.append(self._next())

    # --- tasks ----------------------------------------------------------------------
    def _next(self) -> tuple[str, TaskWire, Outstanding]:
        """One task at a time: the prefetcher, the producer and a pull that outran the
        prefetcher all land here, and generation is CPU-bound and mostly holds the GIL, so running
        two at once gains nothing. It also loses something: the references import
        statsmodels and scikit-learn lazily, and two threads importing those packages at
        once can hit Python's import-lock deadlock detector (a CI run did)."""
        with self._generating:
            with self._lock:
                task_id = next(self._ids)
            task = generate_task(task_id, self._key)
        handle = secrets.token_urlsafe(16)
        kept = Outstanding(task.hidden, task.public.columns, time.monotonic() + self.handle_ttl_s)
        return handle, task.public.to_wire(handle), kept

    def _expire(self) -> None:
        now = time.monotonic()
        while self._handles:
            handle, kept = next(iter(self._handles.items()))
            if kept.expires > now:
                break
            self._handles.pop(handle)
            self._counts["expired"] += 1

    def pull_tasks(self, n: int) -> list[TaskWire]:
        if type(n) is not int or not 1 <= n <= MAX_PULL:
            raise StreamError(f"pull_tasks takes 1 to {MAX_PULL} tasks at a time, not {n!r}")
        with self._lock:
            self._expire()
            if len(self._handles) + n > self.max_outstanding:
                raise StreamError(
                    f"{len(self._handles)} handles are outstanding and the bound is "
                    f"{self.max_outstanding}: score (or let expire) some before pulling more"
                )
        self._wanted.set()
        self._taken.set()
        wires = []
        for _ in range(n):
            try:
                handle, wire, kept = self._ready.popleft()
            except IndexError:
                handle, wire, kept = self._next()
            kept = Outstanding(kept.truth, kept.columns, time.monotonic() + self.handle_ttl_s)
            with self._lock:
                self._handles[handle] = kept
                self._counts["issued"] += 1
            wires.append(wire)
        return wires

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        with self._lock:
            self._expire()
            kept = self._handles.pop(handle, None)
        if kept is None:
            raise StreamError(
                "unknown handle: never issued by this stream, already scored (handles are "
                "single-use), or expired"
            )
        checked = validate_submission(
            kept.truth.family, submission, kept.columns, tuple(kept.truth.estimands)
        )
        record = (
            score_submission(kept.truth, checked.submission)
            if isinstance(checked, Accepted)
            else None
        )
        score = EpisodeScore(record)
        with self._lock:
            self._counts["scored"] += 1
        errors = checked.errors if isinstance(checked, Rejected) else ()
        return StreamScore(
            valid=score.submitted,
            errors=errors,
            reward=score.reward,
            clipped_reward=score.clipped_reward,
            **{k: v for k, v in _components(score).items() if v is not None},  # type: ignore[arg-type]
        )

    # --- episodes -------------------------------------------------------------------
    def configure(self, settings: EpisodeSettings) -> int:
        """Start (or re-point) episode production; returns the bound."""
        with self._lock:
            self._settings = settings
        if not self._actors:
            count = math.ceil(self.concurrency / self.per_actor)
            cls = actor_class(self.cpus * self.per_actor, self.per_actor)
            spec = EpisodeSpec(
                run_id=f"stream-{self.name}", agent="openai", openai=settings.endpoint
            )
            self._actors = [cls.remote(spec) for _ in range(count)]
        if self._producer is None:
            self._producer = threading.Thread(target=self._produce, name="producer", daemon=True)
            self._producer.start()
        return settings.bound

    def set_policy_version(self, version: int) -> None:
        with self._lock:
            if self._settings is None:
                raise StreamError("episode mode is not configured: call configure first")
            self._settings = self._settings.model_copy(update={"policy_version": version})

    def _spec(self, settings: EpisodeSettings) -> EpisodeSpec:
        return EpisodeSpec(
            run_id=f"stream-{self.name}",
            agent="openai",
            openai=settings.endpoint,
            sandbox=self.sandbox,
            image=self.image,
            episode=EpisodeConfig(
                max_turns=settings.max_turns,
                episode_timeout_s=settings.episode_timeout_s,
                tool_timeout_s=min(120.0, settings.episode_timeout_s),
                record_completions=True,
            ),
        )

    def _produce(self) -> None:
        import ray

        while not self._stop.is_set():
            with self._lock:
                settings = self._settings
                room = 0
                if settings is not None:
                    room = settings.bound - len(self._running) - len(self._buffer)
                    room = min(room, self.concurrency - len(self._running))
            for _ in range(max(0, room)):
                assert settings is not None
                handle, wire, kept = self._next()
                actor = self._actors[len(self._running) % len(self._actors)]
                ref = actor.run_with.remote(wire, self._spec(settings))
                with self._lock:
                    self._running[ref] = (handle, settings.policy_version)
                    self._episode_truths[handle] = kept
            refs = list(self._running)
            if not refs:
                self._stop.wait(0.05)
                continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.1)
            for ref in ready:
                self._finish(ref)

    def _finish(self, ref: Any) -> None:
        import ray

        with self._lock:
            handle, version = self._running.pop(ref)
            kept = self._episode_truths.pop(handle)
        try:
            result: EpisodeResult = ray.get(ref)
        except ray.exceptions.RayError as exc:
            status, message = EpisodeStatus.SANDBOX_ERROR, str(exc)[:300]
            result = EpisodeResult(handle=handle, agent="openai", status=status, message=message)
        score = EpisodeScore(score_against(kept.truth, kept.columns, result.submission))
        rollout = Rollout(
            handle=handle,
            family=kept.truth.family.value,
            policy_version=version,
            status=result.status.value,
            reward=score.reward,
            components=_components(score),
            messages=result.transcript,
            completions=result.completions,
            turns=result.turns,
            wall_s=result.wall_s,
            model_s=result.model_s,
            tool_s=result.tool_s,
        )
        with self._lock:
            self._buffer.append(rollout)

    def pull_episodes(
        self, n: int, min_policy_version: int = 0, timeout_s: float = 0.0
    ) -> list[Rollout]:
        """Up to n rollouts of at least `min_policy_version` (older ones are dropped and
        counted as stale); waits up to `timeout_s` for the first one."""
        if type(n) is not int or not 1 <= n <= MAX_PULL:
            raise StreamError(f"pull_episodes takes 1 to {MAX_PULL} rollouts, not {n!r}")
        if type(min_policy_version) is not int or not isinstance(timeout_s, int | float):
            raise StreamError("min_policy_version is an integer and timeout_s a number")
        with self._lock:
            settings = self._settings
        if settings is None:
            raise StreamError("episode mode is not configured: call configure first")
        if not 1 <= n <= settings.bound:
            raise StreamError(f"pull_episodes takes 1 to {settings.bound} (the bound), not {n}")
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                while self._buffer and self._buffer[0].policy_version < min_policy_version:
                    self._buffer.popleft()
                    self._counts["stale"] += 1
                if self._buffer or time.monotonic() >= deadline:
                    out = [self._buffer.popleft() for _ in range(min(n, len(self._buffer)))]
                    self._counts["delivered"] += len(out)
                    return out
            time.sleep(0.02)

    # --- operator -------------------------------------------------------------------
    def stats(self) -> StreamStats:
        with self._lock:
            self._expire()
            settings = self._settings
            return StreamStats(
                name=self.name,
                key_fingerprint=self._key.fingerprint,
                tasks_issued=self._counts["issued"],
                tasks_scored=self._counts["scored"],
                handles_outstanding=len(self._handles),
                handles_expired=self._counts["expired"],
                episodes_running=len(self._running),
                episodes_buffered=len(self._buffer),
                episodes_delivered=self._counts["delivered"],
                episodes_stale=self._counts["stale"],
                episode_bound=settings.bound if settings else 0,
                policy_version=settings.policy_version if settings else 0,
                producing=self._producer is not None and self._producer.is_alive(),
            )

    def export_key(self, path: str) -> str:
        """Write the key to a new 0600 file on the head (the operator's explicit ask);
        returns the fingerprint."""
        try:
            write_key_to(Path(path), self._key)
        except FileExistsError:
            raise StreamError(f"{path} exists: export_key writes a new file only") from None
        except OSError as exc:
            raise StreamError(f"cannot write {path}: {exc.strerror or exc}") from None
        return self._key.fingerprint

    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def stop(self) -> None:
        import ray

        self._stop.set()
        if self._producer is not None:
            self._producer.join(timeout=10)
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
