"""Head actors: the only processes that hold the key or a truth.

Both are pinned to the head node by a custom resource only the head advertises, and
both read the key from the head-local 0600 file whose path they are given (the key is
never an argument, an environment variable or an object in the store).

- `TaskGenerator` derives a task on demand and returns its public wire format under
  the handle the driver chose; the hidden part is dropped on the spot.
- `Scorer` re-derives a task from its id when an attempt comes back (so no truth ever
  travels), scores it with the one scoring path, appends the scored record to
  results.jsonl with its MAC under the run's secret (flushed and fsynced before it
  answers) and the transcript to its own file, and hands the driver a small Progress
  note.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Literal

from causal_gym.errors import GenerationError
from causal_gym.generate.pipeline import generate_task
from causal_gym.scoring.answer import EpisodeScore, episode_score
from causal_gym.task import Task
from causal_gym.wire import TaskWire
from orchestrator.agents.stored_text import cap_with_length
from orchestrator.agents.types import EpisodeResult, EpisodeStatus
from orchestrator.run.head_key import load_key_file
from orchestrator.run.record_mac import load_secret, sealed_line
from orchestrator.run.records import (
    Attempt,
    FailureClass,
    Progress,
    ScoredEpisode,
    TranscriptLine,
)
from orchestrator.run.results import RESULTS_FILE, TRANSCRIPTS_FILE, DurableLog

_CACHE = 32


def _checked_key(key_path: str, fingerprint: str) -> Any:
    key = load_key_file(key_path)
    if key.fingerprint != fingerprint:
        raise RuntimeError("the head key file does not hold the run's key")
    return key


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


class TaskGenerator:
    def __init__(self, key_path: str, fingerprint: str) -> None:
        self.key = _checked_key(key_path, fingerprint)

    def generate(self, task_id: str, handle: str) -> TaskWire:
        return generate_task(task_id, self.key).public.to_wire(handle)

    def ready(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())


class Scorer:
    def __init__(
        self,
        key_path: str,
        fingerprint: str,
        out: str,
        run_id: str,
        config_digest: str,
        sandbox: str,
    ) -> None:
        self.key = _checked_key(key_path, fingerprint)
        self.fingerprint = fingerprint
        self.run_id, self.config_digest, self.sandbox = run_id, config_digest, sandbox
        secret = load_secret(Path(out))
        if secret is None:
            raise RuntimeError(f"the run folder {out} has no run secret")
        self._secret = secret
        self.results = DurableLog(Path(out) / RESULTS_FILE)
        self.transcripts = DurableLog(Path(out) / TRANSCRIPTS_FILE, sync=False)
        self._tasks: OrderedDict[str, Task] = OrderedDict()

    def _task(self, task_id: str) -> Task | None:
        """The task, re-derived (or cached); None when it cannot be generated."""
        task = self._tasks.pop(task_id, None)
        if task is None:
            try:
                task = generate_task(task_id, self.key)
            except GenerationError:
                return None
        self._tasks[task_id] = task
        while len(self._tasks) > _CACHE:
            self._tasks.popitem(last=False)
        return task

    def record(self, attempt: Attempt) -> Progress:
        """Score one finished attempt and make it durable; then report progress."""
        task_id, result, failure_class = attempt.task_id, attempt.result, attempt.failure_class
        task = self._task(task_id)
        score = episode_score(task, result.submission) if task and result else EpisodeScore(None)
        how: dict[str, Any] = result.stats() if result is not None else {}
        status: EpisodeStatus | Literal["lost", "generation_error"] = (
            result.status
            if result
            else "generation_error"
            if failure_class is FailureClass.GENERATION_ERROR
            else "lost"
        )
        message = attempt.message
        text, length = cap_with_length(
            message if message is not None else (result.message if result else None)
        )
        record = ScoredEpisode(
            run_id=self.run_id,
            config_digest=self.config_digest,
            task_id=task_id,
            family=task.public.family.value if task else task_id.split(":")[1],
            tier=task.public.tier.value if task else "unknown",
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
            **record_fields(score),
            **how,
            overhead_s=attempt.overhead_s,
            finished_at=time.time(),
        )
        self.results.append(sealed_line(record, self._secret))
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
