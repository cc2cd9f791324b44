"""The stream's audit log: who did what to a stream, as JSON lines in its state folder.

`audit.jsonl` (0600, appended, each line flushed; kept when the stream stops, so the
next start appends to it) records the service's start (its options) and stop, every
mint and revoke, key export (the path), episode-mode configuration (the endpoint's URL
and model) and policy version, each with the caller's address; and every refused
caller: 401 (no valid token) and 403 (the wrong role), with the route and, when the
token was a consumer's, its name.

What it can never hold: a token (none is ever passed here, so neither a value nor a
prefix of one can be written) or an endpoint's API key (the settings' endpoint is
reduced to its URL and model before it comes here).

Refusals are what an attacker controls, so they are rate-limited: one line a second
per kind and client address, at most 20 a second in all, each line carrying how many
of its kind were held back since the last (the rest are written at stop). A route is
cut to 200 characters, so a line stays under a kilobyte.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal, cast

from orchestrator.errors import StreamError
from orchestrator.host.private_files import private_file
from orchestrator.stream.limits import RateLimiter

AUDIT_FILE = "audit.jsonl"
Refusal = Literal["unauthorized", "forbidden"]
#: Longest route (method and path) written: a path is the client's to choose.
MAX_ROUTE = 200


def audit_line(event: str, fields: dict[str, Any], now: float) -> str:
    """One record: when, what, and its fields (no field may be named time or event)."""
    stamp = datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds")
    record = {"time": stamp.replace("+00:00", "Z"), "event": event, **fields}
    return json.dumps(record, sort_keys=False, default=str) + "\n"


class AuditLog:
    def __init__(
        self,
        path: Path,
        limiter: RateLimiter | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._limiter = limiter or RateLimiter()
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._handle: IO[str] | None = private_file(path, "a")
        except OSError as exc:  # a symlink in its place is refused, not followed
            raise StreamError(
                f"cannot open the audit log {path}: {exc.strerror or exc}", "conflict"
            ) from None

    def record(self, event: str, **fields: Any) -> None:
        """Append one line and flush it (an audit line is written before its reply)."""
        line = audit_line(event, fields, self._clock())
        with self._lock:
            if self._handle is None:
                return
            self._handle.write(line)
            self._handle.flush()

    def refused(self, event: Refusal, route: str, client: str, consumer: str | None = None) -> None:
        """A 401 or 403, rate-limited per kind and client address."""
        held = self._limiter.allow((event, client))
        if held is None:
            return
        fields: dict[str, Any] = {"route": route[:MAX_ROUTE], "client": client}
        if consumer is not None:
            fields["consumer"] = consumer
        if held:
            fields["held_back"] = held
        self.record(event, **fields)

    def close(self) -> None:
        """Write the counts still held back, then close."""
        for key, held in self._limiter.drain():
            if key is None:
                self.record("held_back", count=held, client="(many addresses)")
            else:
                event, client = cast(tuple[str, str], key)
                self.record("held_back", kind=event, client=client, count=held)
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def client_of(scope: Mapping[str, Any]) -> str:
    """The client's address as the connection saw it ("host:port" is not kept: one
    client, many ports)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
