"""Head actors: the only processes that hold the key or a truth.

Both are pinned to the head node by a custom resource only the head advertises, and
the generators read the key from the head-local 0600 file whose path they are given
(the key is never an argument, an environment variable or an object in the store).

- `TaskGenerator` derives a task on demand and returns its public wire format under
  the handle the driver chose. It keeps the task's truth (and its public column names:
  no staged bytes) in its own memory until the attempt comes back, then scores the
  submission against it with the one scoring path and hands out public numbers only.
  A truth never leaves the process that derived it, and no task is derived twice
  (re-deriving to score was half the head's CPU per episode). A generator that lost
  the truth (it was not the one that made the attempt's task) re-derives it.
- `Recorder` appends each scored attempt to results.jsonl, chained to the line before it
  and MACed under the run's key (flushed and fsynced before it answers), moves the
  chain's anchor in the state folder, writes the transcript to its own file, and hands
  the driver a small Progress note.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from causal_gym.errors import GenerationError
from causal_gym.make import generate_task
from causal_gym.scoring.answer import EpisodeScore, score_against
from causal_gym.task import HiddenTruth
from causal_gym.versions import task_reward_version
from causal_gym.wire import TaskWire
from orchestrator.agents.stored_text import cap_with_length
from orchestrator.agents.types import EpisodeResult, EpisodeStatus
from orchestrator.host.private_files import DurableLog
from orchestrator.records.chain import AnchorLog, ChainTip, read_anchor, sealed_line
from orchestrator.records.layout import RESULTS_FILE, TRANSCRIPTS_FILE
from orchestrator.records.mac import run_key
from orchestrator.records.types import (
    Attempt,
    FailureClass,
    NoResult,
    Progress,
    ScoredEpisode,
    TranscriptLine,
)
from orchestrator.run.head_key import load_key_file


def _checked_key(key_path: str, fingerprint: str) -> Any:
    key = load_key_file(key_path)
    if key.fingerprint != fingerprint:
        raise RuntimeError("the head key file does not hold the run's key")
    return key


def no_result(failure: FailureClass | None) -> NoResult:
    """The status of an attempt that brought back no episode."""
    if failure is FailureClass.GENERATION_ERROR:
        return "generation_error"
    return "node_lost" if failure is FailureClass.NODE_LOST else "lost"


def _timeout_cause(failure: FailureClass | None, result: EpisodeResult | None) -> Any:
    if failure is not FailureClass.TIMEOUT:
        return None
    return result.timeout_cause if result is not None else "runner"  # the outer watchdog


def record_fields(score: EpisodeScore) -> dict[str, Any]:
    """A score's fields as a record holds them: each under its own name, and the
    components of a family registered beyond the built-in ones under `components`."""
    fields = score.fields()
    own = {k: v for k, v in fields.items() if k in ScoredEpisode.model_fields}
    extra = {k: float(v) for k, v in fields.items() if k not in ScoredEpisode.model_fields}
    return {**own, "components": extra} if extra else own


class Scored(BaseModel):
    """What a generator hands back for an attempt: the task's public family and tier
    and the score's public numbers (never the truth they came from)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: str
    tier: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class _Kept:
    """What scoring needs of a task, kept in the generator's memory only."""

    truth: HiddenTruth
    columns: tuple[str, ...]
    tier: str


class TaskGenerator:
    def __init__(self, key_path: str, fingerprint: str) -> None:
        self.key = _checked_key(key_path, fingerprint)
        self._kept: dict[str, _Kept] = {}

    def generate(self, task_id: str, handle: str) -> tuple[str, TaskWire]:
        """The handle (a small object the driver watches) and the wire (which goes
        straight to a sandbox actor, never through the driver)."""
        task = generate_task(task_id, self.key)
        public = task.public
        self._kept[task_id] = _Kept(task.hidden, tuple(public.columns), public.tier.value)
        return handle, public.to_wire(handle)

    def score(self, task_id: str, submission: Any) -> Scored:
        """The attempt's score against the kept truth, which is then dropped (a retry
        is generated anew, by whichever generator's turn it is)."""
        kept = self._kept.pop(task_id, None)
        if kept is None:
            try:
                task = generate_task(task_id, self.key)
            except GenerationError:
                return Scored(
                    family=task_id.split(":")[1], tier="unknown", fields=_unscored(task_id)
                )
            kept = _Kept(task.hidden, tuple(task.public.columns), task.public.tier.value)
        record = score_against(kept.truth, kept.columns, submission)
        score = EpisodeScore(record, task_reward_version(task_id))
        return Scored(family=kept.truth.family.value, tier=kept.tier, fields=record_fields(score))

    def kept(self) -> int:
        """How many truths this generator holds (the attempts in flight it made)."""
        return len(self._kept)

    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


def _unscored(task_id: str) -> dict[str, Any]:
    return record_fields(EpisodeScore(None, task_reward_version(task_id)))


class Recorder:
    def __init__(
        self,
        fingerprint: str,
        out: str,
        run_id: str,
        config_digest: str,
        sandbox: str,
        state_dir: str,
    ) -> None:
        """`state_dir`: the driver's checked state folder (the head secret and the
        chain's anchor; the driver has verified the chain up to that anchor)."""
        self.fingerprint = fingerprint
        self.run_id, self.config_digest, self.sandbox = run_id, config_digest, sandbox
        self._state = Path(state_dir)
        self._key = run_key(run_id, self._state)
        self._tip = read_anchor(run_id, self._state)
        self._anchors = AnchorLog(run_id, self._state)
        self.results = DurableLog(Path(out) / RESULTS_FILE)
        self.transcripts = DurableLog(Path(out) / TRANSCRIPTS_FILE, sync=False)

    def record(self, attempt: Attempt, scored: Scored | None) -> Progress:
        """Make one scored attempt durable, then report progress (`scored` is None
        when the task could not be generated: it has no tier and no score)."""
        task_id, result, failure_class = attempt.task_id, attempt.result, attempt.failure_class
        if scored is None:
            scored = Scored(family=task_id.split(":")[1], tier="unknown", fields=_unscored(task_id))
        how: dict[str, Any] = result.stats() if result is not None else {}
        status: EpisodeStatus | NoResult = result.status if result else no_result(failure_class)
        message = attempt.message
        text, length = cap_with_length(
            message if message is not None else (result.message if result else None)
        )
        record = ScoredEpisode(
            run_id=self.run_id,
            config_digest=self.config_digest,
            task_id=task_id,
            family=scored.family,
            tier=scored.tier,
            attempt=attempt.attempt,
            final=not attempt.retried,
            key_fingerprint=self.fingerprint,
            sandbox=self.sandbox,
            agent=attempt.agent,
            status=status,
            failure_class=failure_class,
            retryable=attempt.retried,
            timeout_cause=_timeout_cause(failure_class, result),
            message=text,
            message_chars=length,
            **scored.fields,
            **how,
            overhead_s=attempt.overhead_s,
            finished_at=time.time(),
        )
        sealed, mac = sealed_line(record, self._key, self._tip.mac)
        self.results.append(sealed)
        self._tip = ChainTip(self._tip.lines + 1, mac)
        self._anchors.append(self._tip)
        if result is not None and result.transcript:
            line = TranscriptLine(
                run_id=self.run_id,
                task_id=task_id,
                attempt=attempt.attempt,
                messages=result.transcript,
            )
            self.transcripts.append(line.model_dump_json())
        return Progress(
            task_id=task_id,
            attempt=attempt.attempt,
            final=not attempt.retried,
            family=record.family,
            status=str(record.status),
            failure_class=failure_class,
            reward=record.reward,
            covered=record.covered,
        )

    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def close(self) -> None:
        self.results.close()
        self.transcripts.close()
        self._anchors.close()
