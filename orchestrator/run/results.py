"""The run folder: durable results, resume bookkeeping, and what may be published.

    run.json          the run's identity (config, key fingerprint, task ids); written once
    results.jsonl     one ScoredEpisode per finished attempt, appended, flushed, fsynced
    transcripts.jsonl the conversation of each attempt (head only, like results.jsonl)
    summary.json      redacted aggregates      \\
    report.md         the baseline table      |  meant to be shared
    *.png             plots                    /

A crash loses at most the attempts in flight: every finished one is on disk before
the driver hears of it. `--resume` reads the final lines back and runs exactly the
tasks that have none; it refuses a folder whose run.json describes another run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from orchestrator.errors import OrchestratorError
from orchestrator.run.records import ScoredEpisode, read_record

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
TRANSCRIPTS_FILE = "transcripts.jsonl"
#: Files that stay on the head: they hold task ids (and, with them, everything a
#: secret-key run must not publish).
HEAD_ONLY = (RUN_FILE, RESULTS_FILE, TRANSCRIPTS_FILE)


class RunFolderError(OrchestratorError):
    """Raised before any work when --out holds another run or cannot be used."""


class RunIdentity(BaseModel):
    """What makes two invocations the same run (resume compares it whole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    config_digest: str
    key_fingerprint: str
    task_ids: tuple[str, ...]
    config: dict[str, Any]


def check_folder(out: Path, identity: RunIdentity, resume: bool) -> RunIdentity:
    """Check --out for a new run or for --resume without writing anything; returns the
    identity in force (a resumed run keeps its run id)."""
    run_file = out / RUN_FILE
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"--out {out} exists and is not a directory")
    if run_file.exists():
        try:
            existing = RunIdentity.model_validate_json(run_file.read_text())
        except ValueError as exc:
            raise RunFolderError(
                f"{run_file} is not a causal-gym run file: choose another --out"
            ) from exc
        if not resume:
            raise RunFolderError(
                f"--out {out} already holds run {existing.run_id}: pass --resume to finish "
                "it, or choose another folder"
            )
        if (existing.config_digest, existing.key_fingerprint, existing.task_ids) != (
            identity.config_digest,
            identity.key_fingerprint,
            identity.task_ids,
        ):
            raise RunFolderError(
                f"--out {out} holds run {existing.run_id} with a different configuration, key "
                "or task list: --resume needs the same command (only --concurrency, "
                "--address and the display may change)"
            )
        return existing
    if out.exists() and any(out.iterdir()):
        raise RunFolderError(f"--out {out} is not empty and holds no run: choose a new folder")
    if resume:
        raise RunFolderError(f"--resume: {out} holds no run to resume")
    return identity


def create_folder(out: Path, identity: RunIdentity) -> None:
    """Write run.json for a new run (once everything else has been checked)."""
    run_file = out / RUN_FILE
    if run_file.exists():
        return
    out.mkdir(parents=True, exist_ok=True)
    write_atomically(run_file, identity.model_dump_json(indent=2) + "\n")


def write_atomically(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.partial")
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def read_records(out: Path) -> Iterator[ScoredEpisode]:
    """Every record of results.jsonl. A line torn by a crash (not JSON) is skipped; a
    well-formed line that is not a record this version knows is an error."""
    path = out / RESULTS_FILE
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                json.loads(line)
            except json.JSONDecodeError:
                continue  # torn by a crash mid-write
            try:
                yield read_record(line)
            except ValueError as exc:
                raise RunFolderError(
                    f"{path} holds a line this version cannot read: {exc}"
                ) from exc


def finished_tasks(out: Path) -> dict[str, int]:
    """task id -> attempts recorded so far, for tasks that have a final record."""
    attempts: dict[str, int] = {}
    final: set[str] = set()
    for record in read_records(out):
        attempts[record.task_id] = max(attempts.get(record.task_id, 0), record.attempt + 1)
        if record.final:
            final.add(record.task_id)
    return {task_id: attempts[task_id] for task_id in final}


def attempts_so_far(out: Path) -> dict[str, int]:
    attempts: dict[str, int] = {}
    for record in read_records(out):
        attempts[record.task_id] = max(attempts.get(record.task_id, 0), record.attempt + 1)
    return attempts


class DurableLog:
    """An append-only JSON-lines file: each line is flushed and fsynced before
    `append` returns, so a line the caller has been told about survives a crash."""

    def __init__(self, path: Path, sync: bool = True) -> None:
        self.path = path
        self.sync = sync
        self._handle: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        """A crash mid-write can leave a last line without its newline; end it, so the
        next record starts on a line of its own (readers skip the torn one)."""
        if self.path.stat().st_size == 0:
            return
        with open(self.path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                self._handle.write("\n")
                self._handle.flush()

    def append(self, line: str) -> None:
        self._handle.write(line.rstrip("\n") + "\n")
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.append(line)

    def close(self) -> None:
        self._handle.close()


def dump_json(path: Path, payload: Any) -> None:
    write_atomically(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
