"""results.jsonl as a hash chain, anchored on the head: a line that was deleted, moved
or cut off the end is noticed, and `--resume` never runs a task again silently.

Each line carries `prev`, the MAC of the line written before it (GENESIS for the
first), inside the fields its own MAC covers. A reader keeps the MAC of the last line
it accepted; a line whose `prev` is not that MAC does not follow it: something between
them was deleted, or it was moved. A chain alone cannot tell a file cut after its last
good line from one that ends there, so the recorder also keeps an anchor in the
private state folder (outside the run folder): how many lines the chain has and the
MAC of the last, rewritten atomically after every line. A results file whose chain
stops short of its anchor lost lines at its end.

The anchor is written after the line is durable, so a crash between the two leaves
an anchor one line behind the file (a file ahead of its anchor is fine; one behind it
is not). Anchors are named by a digest of the run id, so no run id can name a path.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.errors import RunFolderError
from orchestrator.private_state import state_folder
from orchestrator.run.record_mac import mac_of
from orchestrator.run.records import ScoredEpisode

#: The `prev` of a run's first line.
GENESIS = "0" * 64
_MAX_ANCHOR_BYTES = 1024


@dataclass(frozen=True)
class ChainTip:
    """How many lines a chain has and the MAC of its last (GENESIS when none)."""

    lines: int = 0
    mac: str = GENESIS


class _Anchor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lines: int = Field(ge=0)
    mac: str = Field(pattern=r"^[0-9a-f]{64}$")


def _anchor_path(run_id: str, root: Path | None) -> Path:
    folder = root / "chains" if root is not None else state_folder("chains")
    if root is not None:
        folder.mkdir(mode=0o700, exist_ok=True)
    name = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:32]
    return folder / f"{name}.json"


def read_anchor(run_id: str, root: Path | None = None) -> ChainTip:
    """The head's anchor of run `run_id` (an empty chain when it has none)."""
    path = _anchor_path(run_id, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return ChainTip()
    except OSError as exc:
        raise RunFolderError(f"cannot read the chain anchor {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(_MAX_ANCHOR_BYTES)
    try:
        anchor = _Anchor.model_validate_json(raw)
    except ValidationError as exc:
        raise RunFolderError(f"the chain anchor {path} is damaged") from exc
    return ChainTip(anchor.lines, anchor.mac)


def write_anchor(run_id: str, tip: ChainTip, root: Path | None = None) -> None:
    """Replace the anchor of run `run_id` by `tip`, durably and atomically."""
    path = _anchor_path(run_id, root)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600)
    try:
        os.write(fd, json.dumps({"lines": tip.lines, "mac": tip.mac}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def short_of(anchor: ChainTip, chained: list[str]) -> str:
    """Why a chain of accepted MACs (in file order) does not reach the head's anchor,
    or '' when it does."""
    if anchor.lines == 0:
        return ""
    if len(chained) < anchor.lines:
        plural = "" if len(chained) == 1 else "s"
        return (
            f"results.jsonl chains {len(chained)} line{plural}, but this head recorded "
            f"{anchor.lines}: lines were deleted (the last ones, or ones moved aside)"
        )
    if chained[anchor.lines - 1] != anchor.mac:
        return (
            f"line {anchor.lines} of the chain is not the one this head recorded: the "
            "records were replaced"
        )
    return ""


def sealed_line(record: ScoredEpisode, key: bytes, prev: str) -> tuple[str, str]:
    """The results.jsonl line of `record` following the line whose MAC is `prev`, and
    its own MAC (the next line's `prev`)."""
    fields = record.model_dump(mode="json", exclude={"mac"})
    fields["prev"] = prev
    mac = mac_of(fields, key)
    return json.dumps({**fields, "mac": mac}, allow_nan=False), mac
