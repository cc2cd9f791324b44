"""One stream as the HTTP front sees it: tokens, the handout of tasks, episode mode, all
over a set of supply workers that hold the key and the truths, and the audit log of
what the operator did.

This process serves every request and holds neither the key nor a truth: it has the
supply workers' actor handles (Ray actors pinned to the head, supply.py) and asks
them to make, score, forget and export. The one place where a Ray failure becomes a
StreamError (`_ask`), so a dead worker is an `unavailable` reply, never a traceback.
Every operator action goes through a method here that writes its audit line (with the
caller's address) before it answers.
"""

from __future__ import annotations

from typing import Any

from orchestrator.errors import StreamError, WorkerGone
from orchestrator.stream.audit import AuditLog
from orchestrator.stream.episodes import EpisodeMode, EpisodeSettings
from orchestrator.stream.handout import Handout, Limits
from orchestrator.stream.listeners import ConnectionGuard
from orchestrator.stream.secrets import EndpointSecrets
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
        secrets: EndpointSecrets | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.name, self.families = name, families
        self.supplies, self.fingerprint, self.tokens = supplies, fingerprint, tokens
        self.handout = Handout(
            len(supplies), self._make, self._score, self._forget, limits, self._extend
        )
        self.episodes = EpisodeMode(name, self.handout, secrets=secrets, **episode_options)
        self.audit = audit
        #: The consumer listener's guard (its connection counts are in the stats).
        self.connections: ConnectionGuard | None = None
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

    def _record(self, event: str, **fields: Any) -> None:
        if self.audit is not None:
            self.audit.record(event, **fields)

    # --- the operator's actions, each audited ---------------------------------------
    def mint(self, name: str, cap: int | None, client: str) -> str:
        if cap is not None and cap > self.handout.limits.per_consumer_outstanding:
            raise StreamError(
                "max_outstanding is at most the stream's per-consumer cap, "
                f"{self.handout.limits.per_consumer_outstanding}, got {cap}"
            )
        token, caller = self.tokens.mint(name)
        self.handout.ledger.register(caller.key, name, cap)
        self._record("mint", consumer=name, max_outstanding=cap, client=client)
        return token

    async def revoke(self, name: str, client: str) -> None:
        caller = self.tokens.revoke(name)
        if caller is None:
            raise StreamError(f"no consumer named {name[:64]!r}", "not_found")
        dropped = await self.handout.revoke(caller.key)
        self.episodes.wake()  # its episode pulls waiting for rollouts end too
        self._record("revoke", consumer=name, handles_dropped=dropped, client=client)

    async def export_key(self, path: str, client: str) -> str:
        fingerprint: str = await _ask(self.supplies[0].export_key.remote(path))
        self._record("export_key", path=path, key_fingerprint=fingerprint, client=client)
        return fingerprint

    def configure_episodes(self, settings: EpisodeSettings, client: str) -> int:
        bound = self.episodes.configure(settings)
        endpoint = settings.endpoint
        key_from = "file" if endpoint.api_key_file else "value" if endpoint.api_key else None
        self._record(
            "configure_episodes", base_url=endpoint.base_url, model=endpoint.model,
            api_key_file=endpoint.api_key_file, api_key_from=key_from,
            policy_version=settings.policy_version, bound=bound, client=client,
        )  # fmt: skip
        return bound

    def set_policy_version(self, version: int, client: str) -> None:
        self.episodes.set_policy_version(version)
        self._record("policy_version", version=version, client=client)

    def stats(self) -> StreamStats:
        handout, episodes = self.handout, self.episodes
        handout.expire()
        totals = handout.totals
        consumers = tuple(handout.ledger.view(key) for key in handout.ledger.consumers())
        settings = episodes.settings
        guard = self.connections
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
            handles_reserved=handout.ledger.totals.reserved,
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
            connections_open=guard.caps.open if guard else 0,
            connections_refused=guard.caps.refused if guard else 0,
            connections_timed_out=guard.timed_out if guard else 0,
            consumers=consumers,
        )

    def request_stop(self, client: str | None = None) -> None:
        if not self.stopping:
            self._record("stop", client=client or "signal")
        self.stopping = True
        for callback in self.on_stop:
            callback()
