"""A run as an inspect_ai log: one `.eval` file, one sample per task, for `inspect view`.

Written through inspect_ai's Python API (EvalLog, EvalSample, ChatMessage*, Score,
write_eval_log): its maintainers keep the API stable, not the file format. inspect_ai
is the `inspect` extra and is imported only here.

What a sample holds: the task's prompt and staged file names (input), the final
attempt's whole conversation (assistant turns, tool calls with their arguments, tool
results, the submission), its score (value: the recorded reward; metadata: the named
components, coverage, width over the reference width, validity, the schema errors
the agent was shown) and, in metadata, every attempt with its failure class, token
usage and timings. The log's header holds the model, the run's config and the
aggregates.

Redaction (a log is meant to be shared): a secret-key run's samples are named by an
opaque id (HMAC of the task id under the run's own secret, so ids are stable across
exports and unlinkable across runs), every task id in any text is replaced by it, and
the loss parts that pin the truth to two values given the answer (absolute error,
interval loss, narrow penalty, loss) are left out. No log holds a truth or the key;
a public-key run (the default key, whose truths anyone can derive) keeps its task ids.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from causal_gym.families.registry import contract_of
from causal_gym.rng_keys.keys import resolve_key
from orchestrator.errors import InspectLogError
from orchestrator.host.private_files import FILE_MODE
from orchestrator.records.run_folder import RunFolder, open_run_folder
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


def require_inspect() -> None:
    """Fail with the install line before any work when inspect_ai is missing."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise InspectLogError(
            "inspect logs need inspect_ai: pip install 'causal-gym[inspect]'"
        ) from exc


def log_name(folder: RunFolder, label: str = "") -> str:
    """inspect_ai's own file-name pattern ({timestamp}_{task}_{id}.eval), so its
    listing reads the task and id without opening the file."""
    stamp = _created(folder).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    task = f"causal-gym-{folder.identity.config.get('split', 'run')}"
    suffix = f"-{label}" if label else ""
    return f"{stamp}_{task}{suffix}_{folder.identity.run_id}.eval"


def export_inspect(
    run_dir: Path, out: Path | None = None, label: str = "", directory: Path | None = None
) -> Path:
    """Write the run's log to `out`, or under its standard name into `directory`
    (default: the run folder), and return its path. The file appears whole or not at
    all (written beside, then renamed)."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    folder = open_run_folder(run_dir)
    target = out if out is not None else (directory or run_dir) / log_name(folder, label)
    if target.suffix != ".eval":
        raise InspectLogError(f"{target}: an inspect log's name ends in .eval")
    log = build_log(folder)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial.eval")
    try:
        write_eval_log(log, str(partial))
        os.chmod(partial, FILE_MODE)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def is_public_key(folder: RunFolder) -> bool:
    return folder.identity.key_fingerprint == resolve_key(environ={}).fingerprint


def build_log(folder: RunFolder) -> Any:
    """The EvalLog of a run folder (see the module docstring for what it holds)."""
    from inspect_ai.log import EvalLog, EvalPlan

    names = _sample_ids(folder)
    samples = [_sample(folder, record, names) for record in folder.finals]
    complete = len(samples) == len(folder.identity.task_ids)
    return EvalLog(
        status="success" if complete else "started",
        eval=_spec(folder, names),
        plan=EvalPlan(name="causal-gym-agent"),
        results=_results(folder, samples),
        stats=_stats(folder),
        samples=samples,
    )


def _sample_ids(folder: RunFolder) -> dict[str, str]:
    if is_public_key(folder):
        return {task_id: task_id for task_id in folder.identity.task_ids}
    key = hashlib.sha256(b"causal-gym inspect sample ids" + folder.secret).digest()
    return {
        task_id: "s-" + hmac.new(key, task_id.encode(), hashlib.sha256).hexdigest()[:16]
        for task_id in folder.identity.task_ids
    }


def _scrub(text: str | None, names: dict[str, str]) -> str | None:
    """`text` with every task id replaced by its sample id (a no-op for public runs)."""
    if text is None:
        return None
    for task_id, name in names.items():
        if task_id != name and task_id in text:
            text = text.replace(task_id, name)
    return text


def _created(folder: RunFolder) -> datetime:
    """The run's start: its id begins with the start time (session.execute)."""
    try:
        return datetime.strptime(folder.identity.run_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        first = min((r.finished_at - r.wall_s for r in folder.records), default=time.time())
        return datetime.fromtimestamp(first, UTC)


def _label(folder: RunFolder, field: str, fallback: str) -> str:
    value = getattr(folder.summary, field, None) if folder.summary else None
    return str(value or fallback)


def _spec(folder: RunFolder, names: dict[str, str]) -> Any:
    from importlib.metadata import version

    from inspect_ai.log import EvalConfig, EvalDataset, EvalSpec

    config = {k: v for k, v in folder.identity.config.items() if k != "address"}
    agent = str(config.get("agent", "agent"))
    return EvalSpec(
        eval_id=folder.identity.run_id,
        run_id=folder.identity.run_id,
        created=_created(folder).isoformat(),
        task=f"causal-gym/{config.get('split', 'run')}",
        task_id=folder.identity.config_digest,
        task_version=folder.identity.reward_version,
        task_args={k: config.get(k) for k in ("split", "families", "n", "per_family", "start")},
        solver=agent,
        dataset=EvalDataset(
            name=str(config.get("split")),
            samples=len(folder.identity.task_ids),
            sample_ids=[names[t] for t in folder.identity.task_ids],
        ),
        model=f"{_label(folder, 'provider', 'causal-gym')}/{_label(folder, 'model', agent)}",
        config=EvalConfig(
            epochs=1,
            message_limit=config.get("max_turns"),
            time_limit=int(config.get("episode_timeout_s") or 0) or None,
            max_samples=config.get("concurrency"),
        ),
        packages={"causal-gym": version("causal-gym")},
        metadata={
            "causal_gym": {
                "run_id": folder.identity.run_id,
                "reward_version": folder.identity.reward_version,
                "key_fingerprint": folder.identity.key_fingerprint,
                "public_key": is_public_key(folder),
                "sample": _label(folder, "sample", str(config.get("split"))),
                "config": config,
            }
        },
    )


def _sample(folder: RunFolder, record: ScoredEpisode, names: dict[str, str]) -> Any:
    from inspect_ai.log import EvalSample, EvalSampleLimit
    from inspect_ai.model import ModelOutput, ModelUsage

    from orchestrator.run.inspect_messages import chat_messages, submission_of

    raw = folder.transcripts.get((record.task_id, record.attempt), [])
    messages = chat_messages(raw, lambda text: _scrub(text, names))
    answer, schema_errors = submission_of(raw)
    first_user = next((m.text for m in messages if m.role == "user"), "")
    usage = record.usage
    model = _label(folder, "model", record.agent)
    limit = None
    if record.failure_class is not None and record.failure_class.value == "timeout":
        budget = float(folder.identity.config.get("episode_timeout_s") or 0.0)
        limit = EvalSampleLimit(type="time", limit=budget, reason=_scrub(record.message, names))
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
    metadata["schema_errors"] = [_scrub(e, names) for e in schema_errors]
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
            explanation += f"; {_scrub(record.message, names)}"
    return Score(value=record.reward, answer=answer, explanation=explanation, metadata=metadata)


def _metadata(folder: RunFolder, record: ScoredEpisode, names: dict[str, str]) -> dict[str, Any]:
    attempts = []
    for attempt in folder.attempts_of(record.task_id):
        entry = {k: getattr(attempt, k) for k in ATTEMPT_FIELDS}
        entry["failure_class"] = attempt.failure_class.value if attempt.failure_class else None
        entry["message"] = _scrub(attempt.message, names)
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


def _results(folder: RunFolder, samples: list[Any]) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    finals = folder.finals
    metrics: dict[str, Any] = {}
    if finals:
        rewards = [r.reward for r in finals]
        metrics["mean"] = sum(rewards) / len(rewards)
        metrics["mean_clipped"] = sum(r.clipped_reward for r in finals) / len(finals)
        covered = [r.covered for r in finals if r.covered is not None]
        if covered:
            metrics["coverage"] = sum(covered) / len(covered)
        metrics["submitted"] = sum(r.submitted for r in finals) / len(finals)
        for family in sorted({r.family for r in finals}):
            mine = [r.reward for r in finals if r.family == family]
            metrics[family] = sum(mine) / len(mine)
        retried = {r.task_id for r in folder.records if not r.final}
        metrics["retry_incidence"] = len(retried) / len(finals)
    return EvalResults(
        total_samples=len(folder.identity.task_ids),
        completed_samples=len(samples),
        scores=[
            EvalScore(
                name=SCORER,
                scorer=SCORER,
                scored_samples=len(samples),
                unscored_samples=len(folder.identity.task_ids) - len(samples),
                metrics={k: EvalMetric(name=k, value=v) for k, v in metrics.items()},
            )
        ],
        metadata={"reward_version": folder.identity.reward_version},
    )


def _stats(folder: RunFolder) -> Any:
    from inspect_ai.log import EvalStats
    from inspect_ai.model import ModelUsage

    finished = max((r.finished_at for r in folder.records), default=None)
    totals = [r.usage for r in folder.records]
    model = _label(folder, "model", str(folder.identity.config.get("agent")))
    return EvalStats(
        started_at=_created(folder).isoformat(),
        completed_at=datetime.fromtimestamp(finished, UTC).isoformat() if finished else "",
        model_usage={
            model: ModelUsage(
                input_tokens=sum(u.prompt_tokens for u in totals),
                output_tokens=sum(u.completion_tokens for u in totals),
                total_tokens=sum(u.total_tokens for u in totals),
            )
        },
    )


def summary_line(path: Path) -> str:
    """One line for the CLI: where the log is and how to look at it."""
    return f"wrote {path}; view it with: inspect view start --log-dir {path.parent}"


__all__ = [
    "InspectLogError",
    "build_log",
    "export_inspect",
    "log_name",
    "require_inspect",
    "summary_line",
]
