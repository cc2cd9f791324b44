"""A finished (or interrupted) run folder read back whole, for exports.

What an export may use, and nothing else: the run's identity (run.json), its records
as read_back accepts them (each attempt once, every MAC checked), the transcript of
each recorded attempt, and summary.json's labels when the run got that far. The
transcripts file carries no MAC (the scorer writes it beside the records), so a line
counts only when it parses, names one of the run's tasks and matches a record's
attempt; anything else is skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from orchestrator.agents.stored_text import MAX_STORED_CHARS, MAX_TRANSCRIPT_MESSAGES
from orchestrator.errors import RunFolderError
from orchestrator.records.layout import TRANSCRIPTS_FILE, RunIdentity
from orchestrator.records.read_back import folder_key, read_back, run_identity
from orchestrator.records.summary import RunSummary
from orchestrator.records.types import ScoredEpisode, TranscriptLine

SUMMARY_FILE = "summary.json"
#: Longest transcript line read: the scorer caps a transcript at
#: MAX_TRANSCRIPT_MESSAGES messages of MAX_STORED_CHARS characters (4 bytes each at
#: most), plus their JSON framing.
MAX_TRANSCRIPT_LINE_BYTES = MAX_TRANSCRIPT_MESSAGES * (4 * MAX_STORED_CHARS + 4096)


@dataclass(frozen=True, repr=False)
class RunFolder:
    path: Path
    identity: RunIdentity
    records: tuple[ScoredEpisode, ...]
    #: (task id, attempt) -> the attempt's messages, for the recorded attempts.
    transcripts: dict[tuple[str, int], list[dict[str, Any]]]
    #: summary.json when the run wrote one (an interrupted run has none).
    summary: RunSummary | None
    #: The run's MAC key: the key of the opaque sample ids of a secret-key run.
    secret: bytes
    refused_lines: int
    skipped_transcripts: int

    @property
    def finals(self) -> list[ScoredEpisode]:
        """Each finished task's final record, in the run's task order."""
        order = {task_id: i for i, task_id in enumerate(self.identity.task_ids)}
        return sorted((r for r in self.records if r.final), key=lambda r: order[r.task_id])

    def attempts_of(self, task_id: str) -> list[ScoredEpisode]:
        return [r for r in self.records if r.task_id == task_id]


def open_run_folder(path: Path) -> RunFolder:
    """The folder's verified contents; RunFolderError when it is not a run folder."""
    if not path.is_dir():
        raise RunFolderError(f"{path} is not a run folder (no such directory)")
    identity = run_identity(path)
    secret = folder_key(path, identity)
    back = read_back(path, identity)
    if back.broken:
        raise RunFolderError(f"{path}: {back.broken}")
    recorded = {(r.task_id, r.attempt) for r in back.records}
    transcripts, skipped = _transcripts(path / TRANSCRIPTS_FILE, recorded)
    summary = None
    if (path / SUMMARY_FILE).is_file():
        try:
            summary = RunSummary.model_validate_json((path / SUMMARY_FILE).read_bytes())
        except (OSError, ValueError) as exc:
            raise RunFolderError(f"{path / SUMMARY_FILE} is not a run summary") from exc
    return RunFolder(
        path=path,
        identity=identity,
        records=back.records,
        transcripts=transcripts,
        summary=summary,
        secret=secret,
        refused_lines=len(back.refused),
        skipped_transcripts=skipped,
    )


def _transcripts(
    path: Path, recorded: set[tuple[str, int]]
) -> tuple[dict[tuple[str, int], list[dict[str, Any]]], int]:
    found: dict[tuple[str, int], list[dict[str, Any]]] = {}
    skipped = 0
    if not path.is_file():
        return found, skipped
    with open(path, "rb") as handle:
        while raw := handle.readline(MAX_TRANSCRIPT_LINE_BYTES):
            if not raw.endswith(b"\n"):  # too long, or torn by a crash: skip the rest
                while (rest := handle.readline(MAX_TRANSCRIPT_LINE_BYTES)) and not rest.endswith(
                    b"\n"
                ):
                    continue
                skipped += 1
                continue
            try:
                line = TranscriptLine.model_validate_json(raw)
            except (ValidationError, ValueError):
                skipped += 1 if raw.strip() else 0
                continue
            where = (line.task_id, line.attempt)
            if where not in recorded or where in found:
                skipped += 1
                continue
            found[where] = line.messages
    return found, skipped
