"""One task of a run as an inspect_ai EvalSample: its final attempt's conversation,
score and metadata, redacted so that a log can be shared.

What a sample holds: the task's prompt and staged file names (input), the final
attempt's whole conversation (assistant turns, tool calls with their arguments, tool
results, the submission: inspect_messages.py), its score (value: the recorded reward;
metadata: the named components, coverage, width over the reference width, validity,
the schema errors the agent was shown) and, in metadata, every attempt with its
failure class, token usage and timings.

Redaction (a log is meant to be shared): a secret-key run's samples are named by an
opaque id (HMAC of the task id under the run's own secret, so ids are stable across
exports and unlinkable across runs), every task id in any text is replaced by it, and
the loss parts that pin the truth to two values given the answer (absolute error,
interval loss, narrow penalty, loss) are left out. A public-key run (the default key,
whose truths anyone can derive) keeps its task ids.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from typing import Any

from causal_gym.contracts.families import contract_of
from causal_gym.rng_keys.keys import resolve_key
from orchestrator.records.run_folder import RunFolder
from orchestrator.records.types import ScoredEpisode

SCORER = "causal_gym"
#: Score fields every log carries; the loss parts only a public-key run's does.
SCORE_FIELDS = (
    "reward_version", "reward", "clipped_reward", "estimand_reward", "covered", "coverage",
    "width_ratio", "validity", "brier_skill",
)  # fmt: skip
LOSS_FIELDS = ("interval_loss", "abs_error", "narrow_penalty", "loss")
ATTEMPT_FIELDS = (
    "attempt", "status", "failure_class", "retryable", "timeout_cause", "message", "reward",
    "turns", "invalid_attempts", "model_retries", "wall_s", "model_s", "tool_s", "overhead_s",
)  # fmt: skip


def is_public_key(folder: RunFolder) -> bool:
    """Whether the run used the default key, whose truths anyone can derive."""
    return folder.identity.key_fingerprint == resolve_key(environ={}).fingerprint


def sample_ids(folder: RunFolder) -> dict[str, str]:
    """Each task id's sample id: itself in a public-key run, an opaque HMAC otherwise."""
    if is_public_key(folder):
        return {task_id: task_id for task_id in folder.identity.task_ids}
    key = hashlib.sha256(b"causal-gym inspect sample ids" + folder.secret).digest()
    return {
        task_id: "s-" + hmac.new(key, task_id.encode(), hashlib.sha256).hexdigest()[:16]
        for task_id in folder.identity.task_ids
    }


def scrub(text: str | None, names: dict[str, str]) -> str | None:
    """`text` with every task id replaced by its sample id (a no-op for public runs)."""
    if text is None:
        return None
    for task_id, name in names.items():
        if task_id != name and task_id in text:
            text = text.replace(task_id, name)
    return text


def summary_label(folder: RunFolder, field: str, fallback: str) -> str:
    """A label of the run's summary (model, provider, ...), or `fallback`."""
    value = getattr(folder.summary, field, None) if folder.summary else None
    return str(value or fallback)


def sample_of(folder: RunFolder, record: ScoredEpisode, names: dict[str, str]) -> Any:
    """The EvalSample of a task's final record (see the module docstring)."""
    from inspect_ai.log import EvalSample, EvalSampleLimit
    from inspect_ai.model import ModelOutput, ModelUsage

    from orchestrator.export.inspect_messages import chat_messages, submission_of

    raw = folder.transcripts.get((record.task_id, record.attempt), [])
    messages = chat_messages(raw, lambda text: scrub(text, names))
    answer, schema_errors = submission_of(raw)
    first_user = next((m.text for m in messages if m.role == "user"), "")
    usage = record.usage
    model = summary_label(folder, "model", record.agent)
    limit = None
    if record.failure_class is not None and record.failure_class.value == "timeout":
        budget = float(folder.identity.config.get("episode_timeout_s") or 0.0)
        limit = EvalSampleLimit(type="time", limit=budget, reason=scrub(record.message, names))
    return EvalSample(
        id=names[record.task_id],
        epoch=1,
        input=first_user or "(no transcript: the attempt produced none)",
        target="",
        files=list(contract_of(record.family).staged_files),
        messages=messages,
        output=ModelOutput.from_content(model, answer or ""),
        scores={SCORER: _score(folder, record, answer, schema_errors, names)},
        metadata=_metadata(folder, record, names),
        model_usage={
            model: ModelUsage(
                input_tokens=usage.prompt_tokens,
                output_tokens=usage.completion_tokens,
                total_tokens=usage.total_tokens,
            )
        },
        started_at=datetime.fromtimestamp(record.finished_at - record.wall_s, UTC).isoformat(),
        completed_at=datetime.fromtimestamp(record.finished_at, UTC).isoformat(),
        total_time=record.wall_s,
        working_time=record.model_s + record.tool_s,
        limit=limit,
        turn_count=record.turns,
    )


def _score(
    folder: RunFolder,
    record: ScoredEpisode,
    answer: str | None,
    schema_errors: list[str],
    names: dict[str, str],
) -> Any:
    from inspect_ai.scorer import Score

    fields = SCORE_FIELDS + (LOSS_FIELDS if is_public_key(folder) else ())
    metadata = {name: getattr(record, name) for name in fields}
    metadata["schema_errors"] = [scrub(e, names) for e in schema_errors]
    if record.submitted:
        parts = ", ".join(
            f"{name} {metadata[name]:.4f}"
            for name in ("estimand_reward", "validity", "brier_skill", "width_ratio")
            if metadata.get(name) is not None
        )
        covered = (
            {True: "; the interval covers", False: "; the interval misses"}.get(record.covered, "")
            if record.covered is not None
            else ""
        )
        explanation = f"reward {record.reward:.4f} ({parts}){covered}"
    else:
        why = record.failure_class.value if record.failure_class else record.status
        explanation = f"no valid submission ({why}): reward -1"
        if record.message:
            explanation += f"; {scrub(record.message, names)}"
    return Score(value=record.reward, answer=answer, explanation=explanation, metadata=metadata)


def _metadata(folder: RunFolder, record: ScoredEpisode, names: dict[str, str]) -> dict[str, Any]:
    attempts = []
    for attempt in folder.attempts_of(record.task_id):
        entry = {k: getattr(attempt, k) for k in ATTEMPT_FIELDS}
        entry["failure_class"] = attempt.failure_class.value if attempt.failure_class else None
        entry["message"] = scrub(attempt.message, names)
        attempts.append(entry)
    metadata: dict[str, Any] = {
        "family": record.family,
        "tier": record.tier,
        "status": str(record.status),
        "failure_class": record.failure_class.value if record.failure_class else None,
        "retried": len(attempts) - 1,
        "attempts": attempts,
        "usage": record.usage.model_dump(),
        "sandbox": record.sandbox,
        "agent": record.agent,
    }
    if is_public_key(folder):
        metadata["task_id"] = record.task_id
    return metadata
