"""Results only the run's own scorer can have written: a MAC on every line.

A results.jsonl line decides what a report says and what `--resume` skips, and a file
is easy to edit, copy or splice. So every line carries HMAC-SHA256 of its other fields
under a secret of the run's own: 32 random bytes made when the run folder is created,
kept in `run.secret` (0600) beside results.jsonl on the head, read by the scorer
actor, never sent anywhere, never part of a shareable file. A line typed by hand, one
edited, or one copied from another run (another secret) fails the check; a line
repeated from this very run passes it, so read_back.py also checks that each task's
attempts follow one another.

The MAC covers the canonical JSON of the record (sorted keys, no spaces), which a
parse and a dump reproduce exactly: Python writes every float so that it reads back
the same.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from orchestrator.run.records import ScoredEpisode

SECRET_FILE = "run.secret"
_SECRET_BYTES = 32


def create_secret(out: Path) -> None:
    """A new run's secret: a fresh 0600 file (an existing one is never replaced)."""
    fd = os.open(out / SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_hex(_SECRET_BYTES))
        handle.flush()
        os.fsync(handle.fileno())


def load_secret(out: Path) -> bytes | None:
    """The run's secret, or None when the folder has none (a run of an older version)."""
    try:
        fd = os.open(out / SECRET_FILE, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd) as handle:
        text = handle.read(4 * _SECRET_BYTES).strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        return None
    return secret if len(secret) == _SECRET_BYTES else None


def _canonical(fields: dict[str, Any]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def mac_of(fields: dict[str, Any], secret: bytes) -> str:
    """The MAC of a record's fields (without its `mac`)."""
    return hmac.new(secret, _canonical(fields), hashlib.sha256).hexdigest()


def sealed_line(record: ScoredEpisode, secret: bytes) -> str:
    """The results.jsonl line of `record`, its MAC included."""
    fields = record.model_dump(mode="json", exclude={"mac"})
    return json.dumps({**fields, "mac": mac_of(fields, secret)}, allow_nan=False)


def mac_holds(fields: dict[str, Any], secret: bytes) -> bool:
    """Whether a parsed line's `mac` is the MAC of its other fields."""
    claimed = fields.get("mac")
    if not isinstance(claimed, str):
        return False
    rest = {k: v for k, v in fields.items() if k != "mac"}
    try:
        expected = mac_of(rest, secret)
    except (TypeError, ValueError):  # not JSON-serialisable the canonical way
        return False
    return hmac.compare_digest(expected, claimed)
