r"""Results only this head's recorder can have written: a MAC on every line and on
run.json, under a key no copy of the run folder holds.

A results.jsonl line decides what a report says and what `--resume` skips, and a file
is easy to edit, copy or splice. So every line carries HMAC-SHA256 of its other fields
(the MAC of the line before it among them: chain.py) under the run's key, and
run.json carries one under the same key. The run's key is derived, never stored:

    run key = HMAC-SHA256(head secret, "causal-gym run key\0" + run id)

where the head secret is 32 random bytes made once per user in the private state
folder (private_state.py: `records.secret`, 0600), outside every run folder. A folder
copied elsewhere, or edited with a secret of the editor's choosing, cannot be re-MACed:
the key never was in it. (Until version 3 the key sat in the folder as `run.secret`;
whoever could replace it could re-MAC every line with reward 1.0.)

The MAC covers the canonical JSON of the fields (sorted keys, no spaces), which a
parse and a dump reproduce exactly: Python writes every float so that it reads back
the same.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from orchestrator.errors import RunFolderError
from orchestrator.host.private_state import state_root

HEAD_SECRET_FILE = "records.secret"
_SECRET_BYTES = 32


def _create_head_secret(path: Path) -> None:
    """Write a new head secret atomically: a finished temporary file linked into place,
    so two first runs at once agree on one secret (the first link wins)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600)
    try:
        os.write(fd, secrets.token_hex(_SECRET_BYTES).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass
    finally:
        temporary.unlink()


def head_secret(root: Path | None = None) -> bytes:
    """This user's head secret (made on first use), from the state folder `root`
    (default: the caller's, checked)."""
    path = (root or state_root()) / HEAD_SECRET_FILE
    if not os.path.lexists(path):
        _create_head_secret(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise RunFolderError(f"cannot read the head secret {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        text = handle.read(4 * _SECRET_BYTES).strip()
    private = stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
    if not private or info.st_mode & 0o077:
        raise RunFolderError(f"the head secret {path} is not a private file of this user: refused")
    try:
        secret = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) != _SECRET_BYTES:
        raise RunFolderError(f"the head secret {path} is damaged: records cannot be checked")
    return secret


def run_key(run_id: str, root: Path | None = None) -> bytes:
    """The MAC key of run `run_id` on this head."""
    message = b"causal-gym run key\0" + run_id.encode("utf-8")
    return hmac.new(head_secret(root), message, hashlib.sha256).digest()


def _canonical(fields: dict[str, Any]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def mac_of(fields: dict[str, Any], key: bytes) -> str:
    """The MAC of a record's fields (without its `mac`)."""
    return hmac.new(key, _canonical(fields), hashlib.sha256).hexdigest()


def mac_holds(fields: dict[str, Any], key: bytes) -> bool:
    """Whether a parsed object's `mac` is the MAC of its other fields."""
    claimed = fields.get("mac")
    if not isinstance(claimed, str):
        return False
    rest = {k: v for k, v in fields.items() if k != "mac"}
    try:
        expected = mac_of(rest, key)
    except (TypeError, ValueError):  # not JSON-serialisable the canonical way
        return False
    return hmac.compare_digest(expected, claimed)
