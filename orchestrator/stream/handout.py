"""The front's book of handles: which consumer holds which task, until when, and the
generation that keeps up with demand.

Everything here runs on the HTTP service's event loop and holds public things only
(task wires and handles); the truths stay with the supply workers (supply.py).

- Generation follows demand: each worker makes one task at a time while pulls wait
  for more tasks than are ready (plus a small prefetch once the stream is in use), so
  every worker the operator gave the stream is busy exactly when a consumer waits.
- A pull is served as tasks become ready, and a handle's time to live starts when it
  is handed to its consumer. A consumer that goes away mid-pull loses nothing others
  need: tasks not yet handed over go back to the ready pool.
- Limits per consumer (outstanding handles, requests at once) and for the stream
  (outstanding handles); a score is accepted only from the consumer that holds the
  handle, once.
- Expired handles are dropped here and their truths forgotten by their worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.errors import StreamError, WorkerGone
from orchestrator.stream.types import ConsumerCounters, Made, StreamScore

Make = Callable[[int], Awaitable[Made]]
ScoreCall = Callable[[int, str, Any], Awaitable[StreamScore]]
Forget = Callable[[int, list[str]], Awaitable[int]]
Extend = Callable[[int, str, int], Awaitable[tuple[str, ...]]]


@dataclass(frozen=True)
class Limits:
    handle_ttl_s: float = 3600.0
    #: Handles one consumer may hold unscored; the stream's total bound.
    per_consumer_outstanding: int = 4096
    max_outstanding: int = 10_000
    #: Requests one consumer may have in flight at once.
    per_consumer_requests: int = 16
    #: Tasks kept ready once the stream is in use (per worker).
    prefetch_per_worker: int = 2


@dataclass
class _Issued:
    consumer: str
    worker: int
    expires: float


@dataclass
class _Counts:
    delivered: int = 0
    scored: int = 0
    expired: int = 0
    outstanding: int = 0
    episodes: int = 0
    requests: int = 0


@dataclass
class _Totals:
    generated: int = 0
    delivered: int = 0
    scored: int = 0
    expired: int = 0
    failed: int = 0
    by_consumer: dict[str, _Counts] = field(default_factory=dict)


def worker_of(handle: str) -> int:
    """Handles start with their worker's index (supply.py)."""
    return int(handle[:2])


class Handout:
    def __init__(
        self,
        workers: int,
        make: Make,
        score: ScoreCall,
        forget: Forget,
        limits: Limits,
        extend: Extend | None = None,
    ) -> None:
        self.workers, self.limits = workers, limits
        self._make, self._score, self._forget, self._extend = make, score, forget, extend
        self._ready: deque[Made] = deque()
        self._issued: OrderedDict[str, _Issued] = OrderedDict()
        #: Handles held until scored, never expired: episode mode's, which it always
        #: scores (a failed episode as an empty submission), however long retries take.
        self._held: dict[str, _Issued] = {}
        self._busy = [False] * workers
        self._gone: set[int] = set()
        #: Why no task can come any more (every worker gone), once that is so.
        self.broken: str | None = None
        self._waiting = 0  # tasks pulls still wait for
        self._used = False
        self._changed = asyncio.Condition()
        self.totals = _Totals()
        self._tasks: set[asyncio.Task[None]] = set()

    # --- generation -----------------------------------------------------------------
    def _wanted(self) -> int:
        prefetch = self.limits.prefetch_per_worker * self.workers if self._used else 0
        return self._waiting + prefetch - len(self._ready)

    def _kick(self) -> None:
        """Start a make on every idle worker while more tasks are wanted."""
        wanted = self._wanted() - sum(self._busy)
        for worker in range(self.workers):
            if wanted <= 0:
                return
            if not self._busy[worker] and worker not in self._gone:
                self._busy[worker] = True
                wanted -= 1
                task = asyncio.create_task(self._make_one(worker))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _make_one(self, worker: int) -> None:
        try:
            wire = await self._make(worker)
        except WorkerGone as exc:
            self._gone.add(worker)
            if len(self._gone) == self.workers:
                self.broken = str(exc)
        except Exception:  # a failed generation is tried again on the next kick
            self.totals.failed += 1
            await asyncio.sleep(0.5)
        else:
            self._ready.append(wire)
            self.totals.generated += 1
        finally:
            self._busy[worker] = False
        async with self._changed:
            self._changed.notify_all()
        self._kick()

    # --- consumers ------------------------------------------------------------------
    def counts(self, consumer: str) -> _Counts:
        return self.totals.by_consumer.setdefault(consumer, _Counts())

    def enter(self, consumer: str) -> None:
        """One more request of `consumer` in flight (bounded per consumer); `leave`
        when it ends."""
        counts = self.counts(consumer)
        if counts.requests >= self.limits.per_consumer_requests:
            raise StreamError(
                f"{consumer} already has {counts.requests} requests in flight "
                f"(at most {self.limits.per_consumer_requests})",
                "too_many",
            )
        counts.requests += 1

    def leave(self, consumer: str) -> None:
        self.counts(consumer).requests -= 1

    @contextlib.asynccontextmanager
    async def request(self, consumer: str) -> AsyncIterator[None]:
        self.enter(consumer)
        try:
            yield
        finally:
            self.leave(consumer)

    def check_room(self, consumer: str, n: int) -> None:
        self.expire()
        mine = self.counts(consumer).outstanding
        if mine + n > self.limits.per_consumer_outstanding:
            raise StreamError(
                f"{consumer} holds {mine} unscored handles and may hold at most "
                f"{self.limits.per_consumer_outstanding}: score (or let expire) some first",
                "too_many",
            )
        if self.outstanding + n > self.limits.max_outstanding:
            raise StreamError(
                f"the stream has {self.outstanding} handles outstanding of at most "
                f"{self.limits.max_outstanding}: try again later",
                "too_many",
            )

    async def pull(
        self, consumer: str, n: int, group: int = 1, held: bool = False
    ) -> AsyncIterator[Made]:
        """`n` tasks for `consumer`, each yielded as soon as it is ready, each under
        `group` handles (`held`: kept until scored instead of expiring after the TTL)."""
        self.check_room(consumer, n * group)
        self._used = True
        self._waiting += n
        left = n
        try:
            self._kick()
            while left:
                async with self._changed:
                    await self._changed.wait_for(lambda: bool(self._ready or self.broken))
                    if not self._ready:
                        raise StreamError(str(self.broken), "unavailable")
                    wire = self._ready.popleft()
                if group > 1:
                    wire = await self._grouped(wire, group)
                left -= 1
                self._waiting -= 1
                self._issue(consumer, wire, held)
                try:
                    yield wire
                except BaseException:  # the consumer went away: not delivered after all
                    self._unissue(consumer, wire)
                    raise
        finally:
            self._waiting -= left
            self._kick()

    async def _grouped(self, wire: Made, group: int) -> Made:
        """The task under `group` handles (its worker keeps the truth under each)."""
        assert self._extend is not None
        try:
            more = await self._extend(worker_of(wire.handle), wire.handle, group - 1)
        except BaseException:
            self._ready.appendleft(wire)  # still whole: the next pull takes it
            raise
        return Made(wire.handle, wire.line, more)

    def _issue(self, consumer: str, wire: Made, held: bool = False) -> None:
        expires = time.monotonic() + self.limits.handle_ttl_s
        book: dict[str, _Issued] = self._held if held else self._issued
        for handle in wire.handles:
            book[handle] = _Issued(consumer, worker_of(handle), expires)
        counts = self.counts(consumer)
        counts.delivered += 1
        counts.outstanding += len(wire.handles)
        self.totals.delivered += 1

    def _unissue(self, consumer: str, wire: Made) -> None:
        """Take back a task the consumer did not get: its first handle goes back to
        the ready pool, a group's other handles are forgotten."""
        book: dict[str, _Issued] = self._held if wire.handle in self._held else self._issued
        if book.pop(wire.handle, None) is None:
            return
        for extra in wire.more:
            book.pop(extra, None)
        counts = self.counts(consumer)
        counts.delivered -= 1
        counts.outstanding -= len(wire.handles)
        self.totals.delivered -= 1
        self._ready.appendleft(Made(wire.handle, wire.line))
        if wire.more:
            task = asyncio.create_task(
                self._forget_quietly(worker_of(wire.handle), list(wire.more))
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def score(self, consumer: str, handle: str, submission: Any) -> StreamScore:
        self.expire()
        book: dict[str, _Issued] = self._held if handle in self._held else self._issued
        issued = book.get(handle)
        if issued is None or issued.consumer != consumer:
            raise StreamError(
                "unknown handle: not issued to this consumer, already scored, or expired",
                "not_found",
            )
        del book[handle]
        counts = self.counts(consumer)
        counts.outstanding -= 1
        result = await self._score(issued.worker, handle, submission)
        counts.scored += 1
        self.totals.scored += 1
        return result

    # --- upkeep ---------------------------------------------------------------------
    def expire(self) -> None:
        """Drop handles past their time to live (oldest first: one TTL for all, so
        the book is in expiry order) and tell their workers to forget them."""
        now = time.monotonic()
        gone: dict[int, list[str]] = {}
        while self._issued:
            handle, issued = next(iter(self._issued.items()))
            if issued.expires > now:
                break
            del self._issued[handle]
            counts = self.counts(issued.consumer)
            counts.outstanding -= 1
            counts.expired += 1
            self.totals.expired += 1
            gone.setdefault(issued.worker, []).append(handle)
        for worker, handles in gone.items():
            task = asyncio.create_task(self._forget_quietly(worker, handles))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _forget_quietly(self, worker: int, handles: list[str]) -> None:
        with contextlib.suppress(Exception):
            await self._forget(worker, handles)

    # --- views ----------------------------------------------------------------------
    def consumer_view(self, consumer: str) -> ConsumerCounters:
        self.expire()
        counts = self.counts(consumer)
        return ConsumerCounters(
            name=consumer,
            tasks_delivered=counts.delivered,
            tasks_scored=counts.scored,
            handles_outstanding=counts.outstanding,
            handles_expired=counts.expired,
            episodes_delivered=counts.episodes,
            max_outstanding=self.limits.per_consumer_outstanding,
            max_requests=self.limits.per_consumer_requests,
            handle_ttl_s=self.limits.handle_ttl_s,
        )

    @property
    def ready(self) -> int:
        return len(self._ready)

    @property
    def outstanding(self) -> int:
        return len(self._issued) + len(self._held)
