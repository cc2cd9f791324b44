"""Who may call a stream: one operator token, and consumer tokens minted by name.

A stream hands out tasks and rewards; its key and truths never leave the head. Two
kinds of caller:

- the operator (whoever started the stream): stop it, export its key to a file on
  the head, configure episode mode, mint and revoke consumer tokens, read the full
  status;
- consumers (trainers): pull tasks, score their own handles, pull episodes, read
  their own counters.

Each mint is a consumer of its own (`Caller.key`, "name#serial"): a name revoked and
minted again is a new consumer with fresh counters and none of the old one's handles.

Tokens are 32 random bytes (URL-safe text with a prefix saying what they are). Only
their SHA-256 is kept, so neither a memory dump of the service nor its status can
give one back; a wrong or revoked token matches no hash and the request ends there,
before its body is read.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Literal

from orchestrator.errors import StreamError

Role = Literal["operator", "consumer"]
#: Names a consumer token is minted under (they appear in the status and in logs).
CONSUMER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_CONSUMERS = 1024


@dataclass(frozen=True)
class Caller:
    role: Role
    name: str
    #: Who this is across the stream's books: the operator, or one mint of a consumer.
    key: str = "(operator)"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def new_token(role: Role) -> str:
    return f"cgs_{'op' if role == 'operator' else 'c'}_{secrets.token_urlsafe(32)}"


class TokenStore:
    """Hashes of the live tokens; thread-safe."""

    def __init__(self, operator_token: str) -> None:
        self._lock = threading.Lock()
        self._by_digest: dict[str, Caller] = {_digest(operator_token): Caller("operator", "")}
        self._consumers: dict[str, str] = {}  # name -> digest
        self._serial = 0

    def caller(self, token: str | None) -> Caller | None:
        """Who holds `token`, or None (unknown, revoked, or no token at all)."""
        if not token:
            return None
        with self._lock:
            return self._by_digest.get(_digest(token))

    def mint(self, name: str) -> tuple[str, Caller]:
        """A new consumer token under `name` (returned once; only its hash is kept),
        and who holds it."""
        if not CONSUMER_NAME.match(name):
            raise StreamError(
                f"consumer names are 1-64 letters, digits, '.', '_' or '-', got {name[:80]!r}"
            )
        token = new_token("consumer")
        with self._lock:
            if name in self._consumers:
                raise StreamError(f"a consumer named {name!r} exists: revoke it first", "conflict")
            if len(self._consumers) >= MAX_CONSUMERS:
                raise StreamError(f"at most {MAX_CONSUMERS} consumers per stream")
            digest = _digest(token)
            self._serial += 1
            caller = Caller("consumer", name, f"{name}#{self._serial}")
            self._consumers[name] = digest
            self._by_digest[digest] = caller
        return token, caller

    def revoke(self, name: str) -> Caller | None:
        """Revoke `name`'s token: who held it, or None when no consumer has that name."""
        with self._lock:
            digest = self._consumers.pop(name, None)
            if digest is None:
                return None
            return self._by_digest.pop(digest, None)

    def consumers(self) -> list[str]:
        with self._lock:
            return sorted(self._consumers)
