"""results.jsonl as a hash chain, anchored on the head: a line that was deleted, moved
or cut off the end is noticed, and `--resume` never runs a task again silently.

Each line carries `prev`, the MAC of the line written before it (GENESIS for the
first), inside the fields its own MAC covers. A reader keeps the MAC of the last line
it accepted; a line whose `prev` is not that MAC does not follow it: something between
them was deleted, or it was moved. A chain alone cannot tell a file cut after its last
good line from one that ends there, so the recorder also appends to an anchor log in
the private state folder (outside the run folder) after every line: how many lines
the chain has and the MAC of the last. A results file whose chain stops short of the
last anchor lost lines at its end.

The anchor log is appended without an fsync of its own (one `write` per line: an
fsync and a rename per line tripled the recorder's cost), after the line itself is
durable. So a crash leaves an anchor behind the file, never ahead of it (a file ahead
of its anchor is fine), and a torn last entry is skipped. After a power failure the
anchor may lag by the lines of the last seconds, which are then not protected against
being cut off the end. Anchors are named by a digest of the run id, so no run id can
name a path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from orchestrator.errors import RunFolderError
from orchestrator.host.private_state import state_folder
from orchestrator.records.mac import mac_of
from orchestrator.records.types import ScoredEpisode

#: The `prev` of a run's first line.
GENESIS = "0" * 64


@dataclass(frozen=True)
class ChainTip:
    """How many lines a chain has and the MAC of its last (GENESIS when none)."""

    lines: int = 0
    mac: str = GENESIS


#: One anchor entry: the chain's length and its last MAC, fixed width.
_ENTRY = re.compile(rb"^(\d{12}) ([0-9a-f]{64})$")
_ENTRY_BYTES = 12 + 1 + 64 + 1


def _anchor_path(run_id: str, root: Path | None) -> Path:
    folder = root / "chains" if root is not None else state_folder("chains")
    if root is not None and not folder.is_dir():
        folder.mkdir(mode=0o700, exist_ok=True)
    name = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:32]
    return folder / f"{name}.log"


def _entry(tip: ChainTip) -> bytes:
    return f"{tip.lines:012d} {tip.mac}\n".encode()


def read_anchor(run_id: str, root: Path | None = None) -> ChainTip:
    """The head's last anchor of run `run_id` (an empty chain when it has none)."""
    path = _anchor_path(run_id, root)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return ChainTip()
    except OSError as exc:
        raise RunFolderError(f"cannot read the chain anchor {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(max(0, size - 4 * _ENTRY_BYTES))
        tail = handle.read()
    for raw in reversed(tail.split(b"\n")):  # the last whole entry (a crash can tear one)
        found = _ENTRY.match(raw)
        if found:
            return ChainTip(int(found.group(1)), found.group(2).decode())
    if size:
        raise RunFolderError(f"the chain anchor {path} is damaged")
    return ChainTip()


class AnchorLog:
    """The recorder's anchor log for one run, open for appending."""

    def __init__(self, run_id: str, root: Path | None = None) -> None:
        path = _anchor_path(run_id, root)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        self._fd = os.open(path, flags, 0o600)

    def append(self, tip: ChainTip) -> None:
        os.write(self._fd, _entry(tip))

    def close(self) -> None:
        os.close(self._fd)


def write_anchor(run_id: str, tip: ChainTip, root: Path | None = None) -> None:
    """Append `tip` to the anchor log of run `run_id`."""
    log = AnchorLog(run_id, root)
    try:
        log.append(tip)
    finally:
        log.close()


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
