"""Scoring command: score one submission (the audit is in audit.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from causal_gym.cli.common import KeyFileOption, TaskIdArgument, app, build, emit, fail

EXIT_INVALID_SUBMISSION = 1


@app.command()
def score(
    task_id: TaskIdArgument,
    submission: Annotated[Path, typer.Argument(help="JSON file with one submission.")],
    key_file: KeyFileOption = None,
) -> None:
    """Validate and score a submission; schema errors exit 1 and are never scored."""
    from causal_gym.scoring.reward import score_submission
    from causal_gym.scoring.validate import Accepted, validate_submission

    try:
        raw = submission.read_bytes()
    except OSError as exc:
        fail(f"cannot read submission {submission}: {exc.strerror or exc}")
    task = build(task_id, key_file)
    checked = validate_submission(
        task.public.family, raw, task.public.columns, task.public.estimands
    )
    if not isinstance(checked, Accepted):
        emit({"task_id": task.public.task_id, "valid": False, "errors": list(checked.errors)})
        for error in checked.errors:
            typer.echo(f"invalid submission: {error}", err=True)
        raise typer.Exit(EXIT_INVALID_SUBMISSION)
    record = score_submission(task.hidden, checked.submission)
    emit({"task_id": task.public.task_id, "valid": True, **record.as_dict()})
