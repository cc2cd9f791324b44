"""Every consumer's counts and the caps on them, kept so that no interleaving of requests
can pass a cap.

A pull reserves all the handles it may issue (n x group) before it waits for its first
task: the check and the reservation happen together on the event loop, with no await
between them, so eight pulls of 4 against a cap of 4 leave one pull with its 4 and
seven refused (checking when a pull started and counting when a handle was issued once
let all eight through: 32 handles). A handle then moves from reserved to outstanding
as it is issued, and a pull that ends early gives back what it did not use. At every
moment, per consumer and for the stream, outstanding + reserved <= the cap.

Consumers are counted by their mint (`Caller.key`, "name#serial"), not by name: a
name revoked and minted again starts with no handles and fresh counters, and cannot
score what the old holder was given. Episode mode's own consumer ("(episodes)") has no
per-consumer cap: its handles are bounded by its episodes in flight (the concurrency),
and it is counted against the stream's cap like everyone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from orchestrator.errors import StreamError
from orchestrator.stream.limits import MAX_HANDLES, MAX_HANDLES_PER_CONSUMER
from orchestrator.stream.types import ConsumerCounters


@dataclass(frozen=True)
class Limits:
    handle_ttl_s: float = 3600.0
    #: Handles one consumer may hold unscored (or have reserved); the stream's total.
    per_consumer_outstanding: int = MAX_HANDLES_PER_CONSUMER
    max_outstanding: int = MAX_HANDLES
    #: Requests one consumer may have in flight at once.
    per_consumer_requests: int = 16
    #: Tasks kept ready once the stream is in use (per worker).
    prefetch_per_worker: int = 2

    def __post_init__(self) -> None:
        if min(self.per_consumer_outstanding, self.max_outstanding) < 1:
            raise ValueError("handle caps are at least 1")


@dataclass
class Counts:
    name: str
    #: Handles this consumer may hold (None: no per-consumer cap).
    cap: int | None
    delivered: int = 0
    scored: int = 0
    expired: int = 0
    outstanding: int = 0
    reserved: int = 0
    episodes: int = 0
    requests: int = 0
    revoked: bool = False


@dataclass
class Totals:
    generated: int = 0
    delivered: int = 0
    scored: int = 0
    expired: int = 0
    failed: int = 0
    outstanding: int = 0
    reserved: int = 0
    by_consumer: dict[str, Counts] = field(default_factory=dict)


class Ledger:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.totals = Totals()

    def register(self, key: str, name: str, cap: int | None = None) -> Counts:
        """A consumer's counts, made at its mint (`cap`: its own, at most the stream's
        per-consumer cap, which the caller checked)."""
        counts = self.totals.by_consumer.get(key)
        if counts is None:
            limit = self.limits.per_consumer_outstanding if cap is None else cap
            counts = self.totals.by_consumer[key] = Counts(name, None if key[0] == "(" else limit)
        return counts

    def counts(self, key: str) -> Counts:
        return self.totals.by_consumer.get(key) or self.register(key, key.partition("#")[0])

    # --- requests in flight ---------------------------------------------------------
    def enter(self, key: str) -> None:
        counts = self.counts(key)
        if counts.requests >= self.limits.per_consumer_requests:
            raise StreamError(
                f"{counts.name} already has {counts.requests} requests in flight "
                f"(at most {self.limits.per_consumer_requests})",
                "too_many",
            )
        counts.requests += 1

    def leave(self, key: str) -> None:
        self.counts(key).requests -= 1

    @contextlib.contextmanager
    def request(self, key: str) -> Iterator[None]:
        self.enter(key)
        try:
            yield
        finally:
            self.leave(key)

    # --- handles --------------------------------------------------------------------
    def reserve(self, key: str, n: int) -> None:
        """Reserve `n` handles for a pull, or refuse it whole (too_many) when the
        consumer's or the stream's cap would be passed. No await may come between a
        caller's check of anything and this call's effect: it is one step."""
        counts, totals = self.counts(key), self.totals
        if counts.revoked:
            raise StreamError("this consumer's token was revoked", "unauthorized")
        held = counts.outstanding + counts.reserved
        if counts.cap is not None and held + n > counts.cap:
            raise StreamError(
                f"{counts.name} may hold at most {counts.cap} unscored handles and holds "
                f"{counts.outstanding} (and {counts.reserved} reserved by pulls under way): "
                f"a pull of {n} more is refused; score (or let expire) some first",
                "too_many",
            )
        if totals.outstanding + totals.reserved + n > self.limits.max_outstanding:
            raise StreamError(
                f"the stream has {totals.outstanding + totals.reserved} handles outstanding "
                f"or reserved, of at most {self.limits.max_outstanding}: a pull of {n} more "
                "is refused; try again later",
                "too_many",
            )
        counts.reserved += n
        totals.reserved += n

    def release(self, key: str, n: int) -> None:
        """Give back `n` reserved handles a pull did not issue."""
        counts = self.counts(key)
        n = min(n, counts.reserved)
        counts.reserved -= n
        self.totals.reserved -= n

    def issue(self, key: str, handles: int) -> None:
        """A task handed out under `handles` handles, which were reserved."""
        self.release(key, handles)
        counts = self.counts(key)
        counts.delivered += 1
        counts.outstanding += handles
        self.totals.delivered += 1
        self.totals.outstanding += handles

    def unissue(self, key: str, handles: int) -> None:
        """A task the consumer did not get after all (its handles are not reserved
        again: the pull that issued it is ending)."""
        counts = self.counts(key)
        counts.delivered -= 1
        counts.outstanding -= handles
        self.totals.delivered -= 1
        self.totals.outstanding -= handles

    def done(self, key: str, handles: int, how: Literal["expired", "dropped"]) -> None:
        """Handles that left the book: expired, or dropped (being scored, or a revoke)."""
        counts = self.counts(key)
        counts.outstanding -= handles
        self.totals.outstanding -= handles
        if how == "expired":
            counts.expired += handles
            self.totals.expired += handles

    def scored(self, key: str) -> None:
        """A handle taken off the book (`done(..., "dropped")`) came back scored."""
        self.counts(key).scored += 1
        self.totals.scored += 1

    def revoke(self, key: str) -> None:
        self.counts(key).revoked = True

    # --- views ----------------------------------------------------------------------
    def view(self, key: str) -> ConsumerCounters:
        counts = self.counts(key)
        return ConsumerCounters(
            name=counts.name,
            tasks_delivered=counts.delivered,
            tasks_scored=counts.scored,
            handles_outstanding=counts.outstanding,
            handles_reserved=counts.reserved,
            handles_expired=counts.expired,
            episodes_delivered=counts.episodes,
            max_outstanding=counts.cap or self.limits.per_consumer_outstanding,
            max_requests=self.limits.per_consumer_requests,
            handle_ttl_s=self.limits.handle_ttl_s,
            revoked=counts.revoked,
        )

    def consumers(self) -> list[str]:
        """Every consumer's key (revoked ones too; not episode mode's), by name."""
        keys = [k for k in self.totals.by_consumer if k[0] != "("]
        return sorted(keys, key=lambda k: (self.totals.by_consumer[k].name, k))
