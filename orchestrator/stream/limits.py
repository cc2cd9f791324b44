"""Bounds that keep one stream serving everyone while some clients misbehave: how many
connections are open (in all and per client address), how often one kind of line is
written, and the process's descriptor limit.

Pure bookkeeping, no sockets and no event loop, so each rule is tested on its own; the
listeners (listeners.py) and the audit log (audit.py) apply them. Why they exist: with
none of them, 19,995 connections that never finished their headers used up the
service's descriptors, /v1/health stopped answering and serve.log grew 82 MB of
identical tracebacks in a minute.
"""

from __future__ import annotations

import logging
import resource
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

#: Unscored handles the stream holds in all, and one consumer holds (ledger.Limits).
MAX_HANDLES = 10_000
MAX_HANDLES_PER_CONSUMER = 4096
#: Connections the consumer listener keeps open at once, and from one client address
#: (a trainer's requests in flight are at most 16 per consumer; 128 leaves room for
#: several consumers behind one address, a NAT or a load balancer's).
MAX_CONNECTIONS = 4096
MAX_CONNECTIONS_PER_ADDRESS = 128
#: The operator listener's own budget: a flood of consumers never locks the operator out.
OPERATOR_CONNECTIONS = 64
#: Seconds from a connection's accept (or its previous response) to a whole request
#: (TLS handshake, headers, body): a slow client past it is disconnected.
HEADER_TIMEOUT_S = 10.0


@dataclass
class _Slot:
    last: float
    held: int = 0


class RateLimiter:
    """At most one line per key every `interval_s`, and at most `per_second` lines a
    second over all keys (an attacker with many addresses has many keys). What it holds
    back is counted, and the count goes out with the key's next line (or `drain`)."""

    def __init__(
        self,
        interval_s: float = 1.0,
        per_second: int = 20,
        max_keys: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval_s, self.per_second, self.max_keys = interval_s, per_second, max_keys
        self._clock = clock
        self._slots: OrderedDict[Hashable, _Slot] = OrderedDict()
        self._window, self._in_window = clock(), 0
        #: Held-back counts of keys forgotten to stay within max_keys.
        self.evicted = 0

    def allow(self, key: Hashable) -> int | None:
        """None: hold this line back (it is counted). Otherwise write it, with this many
        lines of the same key held back since the last one written."""
        now = self._clock()
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = _Slot(last=now - self.interval_s)
            self._evict()
        self._slots.move_to_end(key)
        if now - self._window >= 1.0:
            self._window, self._in_window = now, 0
        if now - slot.last < self.interval_s or self._in_window >= self.per_second:
            slot.held += 1
            return None
        self._in_window += 1
        held, slot.held, slot.last = slot.held, 0, now
        return held

    def _evict(self) -> None:
        while len(self._slots) > self.max_keys:
            _, oldest = self._slots.popitem(last=False)
            self.evicted += oldest.held

    def drain(self) -> list[tuple[Hashable, int]]:
        """Every key with lines held back and not yet reported, and the count (then
        zero); the keys forgotten to stay within max_keys come under None."""
        out = [(key, slot.held) for key, slot in self._slots.items() if slot.held]
        for slot in self._slots.values():
            slot.held = 0
        if self.evicted:
            out.append((None, self.evicted))
            self.evicted = 0
        return out


class ConnectionCaps:
    """Open connections of one listener, in all and per client address."""

    def __init__(self, total: int, per_address: int) -> None:
        if total < 1 or per_address < 1:
            raise ValueError("connection caps are at least 1")
        self.total, self.per_address = total, per_address
        self.open = 0
        self._by_address: dict[str, int] = {}
        self.refused = 0

    def admit(self, address: str) -> str | None:
        """Count a new connection from `address`; or, when a cap is reached, the reason
        it is refused (and it is not counted)."""
        mine = self._by_address.get(address, 0)
        if self.open >= self.total:
            reason = f"{self.open} connections are open (at most {self.total})"
        elif mine >= self.per_address:
            reason = f"{address} has {mine} connections open (at most {self.per_address})"
        else:
            self.open += 1
            self._by_address[address] = mine + 1
            return None
        self.refused += 1
        return reason

    def release(self, address: str) -> None:
        left = self._by_address.get(address, 0) - 1
        if left < 0:
            raise ValueError(f"{address} has no connection open")
        self.open -= 1
        if left:
            self._by_address[address] = left
        else:
            del self._by_address[address]

    def of(self, address: str) -> int:
        return self._by_address.get(address, 0)


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one (a service's budget of sockets is
    the soft limit, often 1,024 where the hard one allows far more); the new soft."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft


def connection_budget(requested: int, descriptors: int) -> int:
    """The connection cap the process can keep: at most half its descriptors, so Ray's
    sockets, the log and the audit file always have theirs."""
    return max(1, min(requested, descriptors // 2))


class RateLimitFilter(logging.Filter):
    """Lets through one record per logger and message a second, and says on the next
    one let through how many were held back (a flood of bad requests or refused
    accepts must not fill the disk with the same line)."""

    def __init__(self, limiter: RateLimiter | None = None) -> None:
        super().__init__()
        self.limiter = limiter or RateLimiter()

    def filter(self, record: logging.LogRecord) -> bool:
        held = self.limiter.allow((record.name, str(record.msg)))
        if held is None:
            return False
        if held:
            record.msg = f"{record.msg} [{held} more like this held back]"
        return True
