"""A run as an inspect_ai log: one `.eval` file, one sample per task, for `inspect view`.

Written through inspect_ai's Python API (EvalLog, EvalSample, ChatMessage*, Score,
write_eval_log): its maintainers keep the API stable, not the file format. inspect_ai
is the `inspect` extra and is imported only in this package.

The log's header holds the model, the run's config and the aggregates; its samples
(inspect_samples.py) hold each task's final attempt, redacted when the run's key is
secret. No log holds a truth or the key.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.errors import InspectLogError
from orchestrator.export.inspect_samples import (
    SCORER,
    is_public_key,
    sample_ids,
    sample_of,
    summary_label,
)
from orchestrator.host.private_files import FILE_MODE
from orchestrator.records.run_folder import RunFolder, open_run_folder


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


def build_log(folder: RunFolder) -> Any:
    """The EvalLog of a run folder (see the module docstring for what it holds)."""
    from inspect_ai.log import EvalLog, EvalPlan

    names = sample_ids(folder)
    samples = [sample_of(folder, record, names) for record in folder.finals]
    complete = len(samples) == len(folder.identity.task_ids)
    return EvalLog(
        status="success" if complete else "started",
        eval=_spec(folder, names),
        plan=EvalPlan(name="causal-gym-agent"),
        results=_results(folder, samples),
        stats=_stats(folder),
        samples=samples,
    )


def _created(folder: RunFolder) -> datetime:
    """The run's start: its id begins with the start time (session.execute)."""
    try:
        return datetime.strptime(folder.identity.run_id[:15], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        first = min((r.finished_at - r.wall_s for r in folder.records), default=time.time())
        return datetime.fromtimestamp(first, UTC)


def _spec(folder: RunFolder, names: dict[str, str]) -> Any:
    from importlib.metadata import version

    from inspect_ai.log import EvalConfig, EvalDataset, EvalSpec

    config = {k: v for k, v in folder.identity.config.items() if k != "address"}
    agent = str(config.get("agent", "agent"))
    provider = summary_label(folder, "provider", "causal-gym")
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
        model=f"{provider}/{summary_label(folder, 'model', agent)}",
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
                "sample": summary_label(folder, "sample", str(config.get("split"))),
                "config": config,
            }
        },
    )


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
    model = summary_label(folder, "model", str(folder.identity.config.get("agent")))
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


def viewer_command(log_dir: Path) -> str:
    """The command that opens `log_dir` in inspect's viewer, as it runs from where the
    user stands: inspect_ai's `inspect` is installed beside this interpreter (the
    README's set-up puts it in .venv/bin, which is not on PATH)."""
    inspect = Path(sys.executable).with_name("inspect")
    try:
        shown = str(inspect.relative_to(Path.cwd()))
    except ValueError:
        shown = str(inspect)
    return f"{shlex.quote(shown)} view start --log-dir {shlex.quote(str(log_dir))}"


def summary_lines(path: Path) -> list[str]:
    """For the CLI: where the log is and the command that opens it, each whole on a
    line of its own (a path run into prose or wrapped cannot be pasted)."""
    return ["wrote the inspect log:", str(path), "view it with:", viewer_command(path.parent)]


__all__ = [
    "InspectLogError",
    "build_log",
    "export_inspect",
    "log_name",
    "require_inspect",
    "summary_lines",
    "viewer_command",
]
