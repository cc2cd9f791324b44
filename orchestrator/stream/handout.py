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
- Caps are counted by the ledger (ledger.py) as handles are reserved and issued, so
  they hold at every moment; a score is accepted only from the mint that holds the
  handle, once.
- Revoking a consumer ends its pulls under way (their tasks not yet handed over go back
  to the ready pool) and forgets its handles.
- Expired handles are dropped here and their truths forgotten by their worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from orchestrator.errors import StreamError, WorkerGone
from orchestrator.stream.ledger import Counts, Ledger, Limits
from orchestrator.stream.types import ConsumerCounters, Made, StreamScore

Make = Callable[[int], Awaitable[Made]]
ScoreCall = Callable[[int, str, Any], Awaitable[StreamScore]]
Forget = Callable[[int, list[str]], Awaitable[int]]
Extend = Callable[[int, str, int], Awaitable[tuple[str, ...]]]
__all__ = ["Handout", "Limits", "Pull", "worker_of"]


@dataclass
class Pull:
    """One pull under way: its consumer, its size, the handles it still has reserved."""

    consumer: str
    n: int
    group: int
    reserved: int
    request: bool
    closed: bool = False


@dataclass
class _Issued:
    consumer: str
    worker: int
    expires: float


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
        self.ledger = Ledger(limits)
        self.totals = self.ledger.totals
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
        self._tasks: set[asyncio.Task[Any]] = set()

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
                self._spawn(self._make_one(worker))

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
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
        await self._notify()
        self._kick()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # --- consumers ------------------------------------------------------------------
    def counts(self, consumer: str) -> Counts:
        return self.ledger.counts(consumer)

    @contextlib.asynccontextmanager
    async def request(self, consumer: str) -> AsyncIterator[None]:
        """One request of `consumer` in flight while inside (bounded per consumer)."""
        with self.ledger.request(consumer):
            yield

    def open_pull(self, consumer: str, n: int, group: int = 1, request: bool = True) -> Pull:
        """A pull of `n` tasks under `group` handles each, its handles reserved now (and
        one request in flight, with `request`), or refused whole; `close_pull` ends it
        however it ends, even when its reply never started."""
        self.expire()
        if request:
            self.ledger.enter(consumer)
        try:
            self.ledger.reserve(consumer, n * group)
        except StreamError:
            if request:
                self.ledger.leave(consumer)
            raise
        return Pull(consumer, n, group, n * group, request)

    def close_pull(self, pull: Pull) -> None:
        """Give back what the pull reserved and did not issue (idempotent)."""
        if pull.closed:
            return
        pull.closed = True
        self.ledger.release(pull.consumer, pull.reserved)
        pull.reserved = 0
        if pull.request:
            self.ledger.leave(pull.consumer)

    async def pull(
        self, consumer: str, n: int, group: int = 1, held: bool = False
    ) -> AsyncIterator[Made]:
        """`n` tasks for `consumer` (held: kept until scored instead of expiring after
        the TTL), for episode mode: no request is counted."""
        pull = self.open_pull(consumer, n, group, request=False)
        try:
            async for made in self.serve(pull, held):
                yield made
        finally:
            self.close_pull(pull)

    async def serve(self, pull: Pull, held: bool = False) -> AsyncIterator[Made]:
        """The pull's tasks, each yielded as soon as it is ready."""
        consumer, group = pull.consumer, pull.group
        self._used = True
        self._waiting += pull.n
        left = pull.n
        counts = self.ledger.counts(consumer)
        try:
            self._kick()
            while left:
                async with self._changed:
                    await self._changed.wait_for(
                        lambda: bool(self._ready or self.broken or counts.revoked)
                    )
                    if counts.revoked:
                        raise StreamError("this consumer's token was revoked", "unauthorized")
                    if not self._ready:
                        raise StreamError(str(self.broken), "unavailable")
                    wire = self._ready.popleft()
                if group > 1:
                    wire = await self._grouped(wire, group)
                    if self.ledger.counts(consumer).revoked:  # while its handles were made
                        self._take_back(wire)
                        raise StreamError("this consumer's token was revoked", "unauthorized")
                left -= 1
                self._waiting -= 1
                self._issue(consumer, wire, held)
                pull.reserved -= len(wire.handles)
                try:
                    yield wire
                except BaseException:  # the consumer went away: not delivered after all
                    self._unissue(consumer, wire)
                    raise
        finally:
            self._waiting -= left
            self.close_pull(pull)
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

    def _take_back(self, wire: Made) -> None:
        """A task back to the ready pool under its first handle; a group's other
        handles are forgotten."""
        self._ready.appendleft(Made(wire.handle, wire.line))
        if wire.more:
            self._spawn(self._forget_quietly(worker_of(wire.handle), list(wire.more)))

    def _issue(self, consumer: str, wire: Made, held: bool = False) -> None:
        expires = time.monotonic() + self.limits.handle_ttl_s
        book: dict[str, _Issued] = self._held if held else self._issued
        for handle in wire.handles:
            book[handle] = _Issued(consumer, worker_of(handle), expires)
        self.ledger.issue(consumer, len(wire.handles))

    def _unissue(self, consumer: str, wire: Made) -> None:
        """Take back a task the consumer did not get."""
        book: dict[str, _Issued] = self._held if wire.handle in self._held else self._issued
        if book.pop(wire.handle, None) is None:
            return  # forgotten already (a revoke)
        for extra in wire.more:
            book.pop(extra, None)
        self.ledger.unissue(consumer, len(wire.handles))
        self._take_back(wire)

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
        self.ledger.done(consumer, 1, "dropped")
        result = await self._score(issued.worker, handle, submission)
        self.ledger.scored(consumer)
        return result

    async def revoke(self, consumer: str) -> int:
        """End `consumer`'s pulls under way and forget its handles; how many."""
        self.ledger.revoke(consumer)
        gone: dict[int, list[str]] = {}
        for book in (self._issued, self._held):
            mine = [h for h, issued in book.items() if issued.consumer == consumer]
            for handle in mine:
                gone.setdefault(book.pop(handle).worker, []).append(handle)
        count = sum(len(handles) for handles in gone.values())
        if count:
            self.ledger.done(consumer, count, "dropped")
        for worker, handles in gone.items():
            self._spawn(self._forget_quietly(worker, handles))
        await self._notify()  # its waiting pulls wake up and end
        return count

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
            self.ledger.done(issued.consumer, 1, "expired")
            gone.setdefault(issued.worker, []).append(handle)
        for worker, handles in gone.items():
            self._spawn(self._forget_quietly(worker, handles))

    async def _forget_quietly(self, worker: int, handles: list[str]) -> None:
        with contextlib.suppress(Exception):
            await self._forget(worker, handles)

    # --- views ----------------------------------------------------------------------
    def consumer_view(self, consumer: str) -> ConsumerCounters:
        self.expire()
        return self.ledger.view(consumer)

    @property
    def ready(self) -> int:
        return len(self._ready)

    @property
    def outstanding(self) -> int:
        return len(self._issued) + len(self._held)
