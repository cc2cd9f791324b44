"""One stream as the HTTP front sees it: tokens, the handout of tasks, episode mode, all
over a set of supply workers that hold the key and the truths.

This process serves every request and holds neither the key nor a truth: it has the
supply workers' actor handles (Ray actors pinned to the head, supply.py) and asks
them to make, score, forget and export. The one place where a Ray failure becomes a
StreamError (`_ask`), so a dead worker is an `unavailable` reply, never a traceback.
"""

from __future__ import annotations

from typing import Any

from orchestrator.errors import StreamError, WorkerGone
from orchestrator.stream.episodes import EpisodeMode
from orchestrator.stream.handout import Handout, Limits
from orchestrator.stream.tokens import TokenStore
from orchestrator.stream.types import API_VERSION, Made, StreamScore, StreamStats


async def _ask(call: Any) -> Any:
    import ray

    try:
        return await call
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, StreamError):
            raise StreamError(str(cause), cause.code) from None
        raise StreamError("a supply worker failed: try again", "unavailable") from None
    except ray.exceptions.RayError:
        raise WorkerGone("a supply worker is gone: the stream cannot serve this") from None


class StreamService:
    def __init__(
        self,
        name: str,
        families: tuple[str, ...],
        supplies: list[Any],
        fingerprint: str,
        tokens: TokenStore,
        limits: Limits,
        episode_options: dict[str, Any],
    ) -> None:
        self.name, self.families = name, families
        self.supplies, self.fingerprint, self.tokens = supplies, fingerprint, tokens
        self.handout = Handout(
            len(supplies), self._make, self._score, self._forget, limits, self._extend
        )
        self.episodes = EpisodeMode(name, self.handout, **episode_options)
        self.stopping = False
        self.on_stop: list[Any] = []

    async def _make(self, worker: int) -> Made:
        made: Made = await _ask(self.supplies[worker].make.remote())
        return made

    async def _extend(self, worker: int, handle: str, count: int) -> tuple[str, ...]:
        more: tuple[str, ...] = await _ask(self.supplies[worker].extend.remote(handle, count))
        return more

    async def _score(self, worker: int, handle: str, submission: Any) -> StreamScore:
        score: StreamScore = await _ask(self.supplies[worker].score.remote(handle, submission))
        return score

    async def _forget(self, worker: int, handles: list[str]) -> int:
        count: int = await _ask(self.supplies[worker].forget.remote(handles))
        return count

    async def export_key(self, path: str) -> str:
        fingerprint: str = await _ask(self.supplies[0].export_key.remote(path))
        return fingerprint

    def stats(self) -> StreamStats:
        handout, episodes = self.handout, self.episodes
        handout.expire()
        totals = handout.totals
        consumers = tuple(
            handout.consumer_view(name) for name in sorted(totals.by_consumer) if name[0] != "("
        )
        settings = episodes.settings
        return StreamStats(
            name=self.name,
            key_fingerprint=self.fingerprint,
            api_version=API_VERSION,
            workers=len(self.supplies),
            families=self.families,
            tasks_generated=totals.generated,
            tasks_delivered=totals.delivered,
            tasks_scored=totals.scored,
            tasks_ready=handout.ready,
            handles_outstanding=handout.outstanding,
            handles_expired=totals.expired,
            episodes_running=episodes.running,
            episodes_buffered=episodes.buffered,
            episodes_delivered=episodes.delivered,
            episodes_stale=episodes.stale,
            episodes_retried=episodes.retried,
            episodes_actors_lost=episodes.lost,
            episodes_started=episodes.started,
            episodes_nodes_lost=episodes.nodes_lost,
            episode_bound=settings.bound if settings else 0,
            policy_version=settings.policy_version if settings else 0,
            producing=settings is not None,
            consumers=consumers,
        )

    def request_stop(self) -> None:
        self.stopping = True
        for callback in self.on_stop:
            callback()
