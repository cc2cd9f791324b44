r"""The run folder's layout: the files it holds, the run's identity (run.json), and
the checks before a new or resumed run writes to it.

    run.json          the run's identity (config, key fingerprint, task ids) and its MAC;
                      written once
    results.jsonl     one ScoredEpisode per finished attempt, appended, flushed, fsynced,
                      each line MACed and chained to the one before (mac.py,
                      chain.py: the key and the chain's anchor are in the head's
                      private state folder, never in the run folder)
    results.rejected.jsonl  lines --resume refused, with the reason (read_back.py)
    transcripts.jsonl the conversation of each attempt (head only, like results.jsonl)
    placement.json    which node each actor landed on (run/session.py)
    summary.json      redacted aggregates      \
    report.md         the baseline table      |  meant to be shared (summary.py,
    *.png             plots                    /   report.py)

A crash loses at most the attempts in flight: every finished one is on disk before
the driver hears of it. `--resume` reads the lines back (read_back.py: only those this
run's scorer wrote, each attempt once) and runs exactly the tasks that have no final
one; it refuses a folder whose run.json describes another run.

The folder is 0700 and every file in it 0600 from the moment it is created
(host/private_files.py): the results give the truth away (an estimate and its
absolute error pin it to two values), and a user's policy runs under another uid on
the same machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from causal_gym.versions import UNVERSIONED
from orchestrator.errors import RunFolderError
from orchestrator.host.private_files import private_folder, write_atomically

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"
TRANSCRIPTS_FILE = "transcripts.jsonl"
#: Files that stay on the head: they hold task ids (and, with them, everything a
#: secret-key run must not publish).
HEAD_ONLY = (RUN_FILE, RESULTS_FILE, "results.rejected.jsonl", TRANSCRIPTS_FILE)
#: Run ids name nothing on disk, but they appear in file names of exports and logs.
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class RunIdentity(BaseModel):
    """What makes two invocations the same run (resume compares it whole)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str = Field(pattern=RUN_ID_PATTERN)
    config_digest: str
    key_fingerprint: str
    task_ids: tuple[str, ...]
    config: dict[str, Any]
    #: The reward version the run scores with; a run.json without one is version 1's.
    reward_version: int = UNVERSIONED
    #: HMAC of the rest under the run's key (mac.py); '' before records version 3.
    mac: str = ""

    def _fields(self) -> dict[str, Any]:
        return {"run.json": self.model_dump(mode="json", exclude={"mac"})}

    def sealed(self, key: bytes) -> RunIdentity:
        from orchestrator.records.mac import mac_of

        return self.model_copy(update={"mac": mac_of(self._fields(), key)})

    def sealed_by(self, key: bytes) -> bool:
        from orchestrator.records.mac import mac_holds

        return bool(self.mac) and mac_holds({**self._fields(), "mac": self.mac}, key)


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
        if existing.reward_version != identity.reward_version:
            raise RunFolderError(
                f"--out {out} holds run {existing.run_id}, scored with reward version "
                f"{existing.reward_version}; this causal-gym scores with version "
                f"{identity.reward_version}, and one report never mixes them: start a new "
                "run in another folder (the old one still reports its own version)"
            )
        return existing
    if out.exists() and any(out.iterdir()):
        raise RunFolderError(f"--out {out} is not empty and holds no run: choose a new folder")
    if resume:
        raise RunFolderError(f"--resume: {out} holds no run to resume")
    return identity


def create_folder(out: Path, identity: RunIdentity) -> RunIdentity:
    """Write run.json, sealed under the run's key, for a new run (once everything else
    has been checked); returns the identity as run.json holds it (a resumed run's
    folder already has one)."""
    from orchestrator.records.mac import run_key

    if identity.mac or (out / RUN_FILE).exists():  # a resume: run.json is written once
        return identity
    private_folder(out)
    sealed = identity.sealed(run_key(identity.run_id))
    write_atomically(out / RUN_FILE, sealed.model_dump_json(indent=2) + "\n")
    return sealed
