"""Reading results.jsonl back: only lines this run's recorder wrote, each counted once,
none missing.

Every reader of a run's records (the resume bookkeeping, the report, the export, the
scripts) goes through `read_back`, which accepts a line only when all of these hold,
in this order, and otherwise refuses it with the first reason that failed:

1. it is a JSON object (a crash can tear the last line);
2. its MAC holds under the run's key (mac.py: derived from the head's secret);
3. it follows the last accepted line: its `prev` is that line's MAC (chain.py);
4. it parses as a record of this version, every number in range (types.py);
5. its run id, config digest and key fingerprint are the run's (run.json);
6. its task is one of the run's;
7. its attempt is the task's next one (0, 1, 2, ... in file order) and no final
   record of the task came before it (one final record per task).

Then the chain of accepted lines must reach the head's anchor. A line refused by rule
3, or a chain that stops short of the anchor, means genuine lines were deleted, moved
or cut off: `broken` says where, and `--resume` refuses the folder rather than run a
task again (a forged line, refused by rule 2, changes nothing and is only set aside).

`set_aside` moves refused lines to results.rejected.jsonl (appended, fsynced) and
rewrites results.jsonl with the accepted ones, so `--resume` starts from a file
every later reader accepts whole. Nothing refused is ever deleted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from orchestrator.errors import RunFolderError
from orchestrator.host.private_files import DurableLog, write_atomically
from orchestrator.records.chain import GENESIS, ChainTip, read_anchor, short_of, write_anchor
from orchestrator.records.layout import RESULTS_FILE, RUN_FILE, RunIdentity
from orchestrator.records.mac import mac_holds, run_key
from orchestrator.records.types import ScoredEpisode

REJECTED_FILE = "results.rejected.jsonl"
#: Longest line read back; a scorer's line is a few KiB (messages are capped at 16 KiB).
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class Refused:
    number: int  # 1-based line number in results.jsonl
    reason: str
    text: str


@dataclass(frozen=True, repr=False)
class ReadBack:
    records: tuple[ScoredEpisode, ...]
    refused: tuple[Refused, ...]
    lines: tuple[str, ...]  # the accepted lines, as written
    #: Where the chain is broken (lines deleted, moved or cut off), or '' when whole.
    broken: str = ""

    def finished(self) -> dict[str, int]:
        """Attempts recorded per task id, for the tasks that have their final record."""
        attempts = self.attempts()
        return {r.task_id: attempts[r.task_id] for r in self.records if r.final}

    def attempts(self) -> dict[str, int]:
        """Attempts recorded so far per task id (each the next attempt's number)."""
        counts: dict[str, int] = {}
        for record in self.records:
            counts[record.task_id] = record.attempt + 1
        return counts

    def refusals(self) -> str:
        """'3 lines refused (2 a MAC that does not hold, ...)', or '' when none was."""
        if not self.refused:
            return ""
        counts = Counter(_kind(r.reason) for r in self.refused)
        parts = ", ".join(f"{n} {kind}" for kind, n in counts.most_common())
        plural = "s" if len(self.refused) != 1 else ""
        return f"{len(self.refused)} line{plural} of {RESULTS_FILE} refused ({parts})"


def _kind(reason: str) -> str:
    return reason.split(":", 1)[0]


def run_identity(out: Path) -> RunIdentity:
    try:
        return RunIdentity.model_validate_json((out / RUN_FILE).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise RunFolderError(f"{out / RUN_FILE} is not a causal-gym run file") from exc


def folder_key(out: Path, identity: RunIdentity) -> bytes:
    """The run's MAC key, once run.json is shown to be this head's (its MAC holds)."""
    if not identity.mac:
        raise RunFolderError(
            f"{out} was written by a causal-gym before records version 3 (its MAC key was "
            "kept in the folder, so its records cannot be trusted): start a new run in "
            "another folder"
        )
    key = run_key(identity.run_id)
    if not identity.sealed_by(key):
        raise RunFolderError(
            f"{out / RUN_FILE} was not written by a run of this user on this head, or was "
            "changed since: its records cannot be checked here"
        )
    return key


def read_back(out: Path, identity: RunIdentity | None = None) -> ReadBack:
    """The run's accepted records and its refused lines (see the module docstring)."""
    identity = identity or run_identity(out)
    key = folder_key(out, identity)
    tasks = set(identity.task_ids)
    expected = (identity.run_id, identity.config_digest, identity.key_fingerprint)
    next_attempt: dict[str, int] = {}
    closed: set[str] = set()
    records: list[ScoredEpisode] = []
    lines: list[str] = []
    chained: list[str] = []  # the accepted lines' MACs, in file order
    refused: list[Refused] = []
    unchained = 0  # the first line refused for not following the chain
    path = out / RESULTS_FILE
    if path.exists():
        with open(path, "rb") as handle:
            for number, raw in enumerate(_lines(handle), start=1):
                text = raw.decode("utf-8", "replace").rstrip("\n")
                if not text.strip():
                    continue
                tip = chained[-1] if chained else GENESIS
                reason, record = _check(text, key, tip, expected, tasks, next_attempt, closed)
                if record is None:
                    refused.append(Refused(number, reason, text))
                    if reason.startswith("broken chain") and not unchained:
                        unchained = number
                    continue
                next_attempt[record.task_id] = record.attempt + 1
                if record.final:
                    closed.add(record.task_id)
                records.append(record)
                lines.append(text)
                chained.append(record.mac)
    # A repeated or moved line is refused and changes nothing; the chain is broken only
    # when what it holds stops short of what the head recorded.
    broken = short_of(read_anchor(identity.run_id), chained)
    if broken and unchained:
        broken = (
            f"results.jsonl line {unchained} does not follow the line before it (lines were "
            f"deleted or moved there); {broken}"
        )
    return ReadBack(tuple(records), tuple(refused), tuple(lines), broken)


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The file's lines, each cut at MAX_LINE_BYTES (the head of a longer one fails to
    parse; the rest of it is skipped)."""
    while chunk := handle.readline(MAX_LINE_BYTES):
        if not chunk.endswith(b"\n"):
            while (rest := handle.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                continue
        yield chunk


def read_records(out: Path) -> list[ScoredEpisode]:
    """The accepted records of a run folder (what its report counts)."""
    return list(read_back(out).records)


def _check(
    text: str,
    key: bytes,
    tip: str,
    expected: tuple[str, str, str],
    tasks: set[str],
    next_attempt: dict[str, int],
    closed: set[str],
) -> tuple[str, ScoredEpisode | None]:
    try:
        fields = json.loads(text)
    except ValueError:
        return "not JSON: a line torn by a crash, or not a record", None
    if not isinstance(fields, dict):
        return "not JSON: not an object", None
    if not mac_holds(fields, key):
        return "bad MAC: not written by this run's recorder, or changed since", None
    if fields.get("prev") != tip:
        return (
            "broken chain: it does not follow the line accepted before it (a line was "
            "deleted, moved or repeated)",
            None,
        )
    try:
        record = ScoredEpisode.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        return f"out of range: {where}: {first['msg']}", None
    if (record.run_id, record.config_digest, record.key_fingerprint) != expected:
        return "another run: its run id, config digest or key fingerprint differs", None
    if record.task_id not in tasks:
        return "not in this run: its task is not one of the run's", None
    if record.task_id in closed:
        return "after the final record: its task was already finished", None
    wanted = next_attempt.get(record.task_id, 0)
    if record.attempt != wanted:
        return f"out of order: attempt {record.attempt} where {wanted} was next", None
    return "", record


def set_aside(out: Path, back: ReadBack) -> None:
    """Move refused lines to results.rejected.jsonl and keep the accepted ones.

    The refused lines are appended and fsynced first; only then is results.jsonl
    replaced (atomically) by the accepted lines, so a crash in between leaves a line
    in both files, never in neither."""
    if not back.refused:
        return
    log = DurableLog(out / REJECTED_FILE)
    try:
        for item in back.refused:
            log.append(json.dumps({"line": item.number, "reason": item.reason, "text": item.text}))
    finally:
        log.close()
    body = "".join(line + "\n" for line in back.lines)
    write_atomically(out / RESULTS_FILE, body)


def reanchor(run_id: str, back: ReadBack) -> None:
    """Move the head's anchor to the end of a chain that reached it (a crash between a
    line and its anchor leaves the anchor one line behind), so the recorder continues
    the chain from the file's last line."""
    if back.broken or not back.records:
        return
    tip = ChainTip(len(back.records), back.records[-1].mac)
    if tip.lines > read_anchor(run_id).lines:
        write_anchor(run_id, tip)
