"""Task commands: materialize, inspect, reference."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from causal_gym.cli.common import (
    KeyFileOption,
    TaskIdArgument,
    app,
    build,
    emit,
    fail,
    write_atomically,
)
from causal_gym.errors import StagingError

if TYPE_CHECKING:
    from causal_gym.task import PublicTask


def write_staged(task: PublicTask, out: Path) -> None:
    """Write exactly the staged files into `out` (new, empty, or a previous task's)."""
    from causal_gym.contracts.families import contracts

    any_staged = {name for spec in contracts() for name in spec.staged_files}
    if out.exists() and not out.is_dir():
        raise StagingError(f"--out {out} exists and is not a directory")
    if out.is_dir():
        extra = sorted(p.name for p in out.iterdir() if p.name not in any_staged)
        if extra:
            raise StagingError(
                f"--out {out} already holds other files ({', '.join(extra[:3])}); "
                "give an empty or new directory"
            )
    for name in task.staged_files:
        write_atomically(out / name, task.files[name])


@app.command()
def materialize(
    task_id: TaskIdArgument,
    out: Annotated[Path, typer.Option("--out", help="Directory that receives the staged files.")],
    key_file: KeyFileOption = None,
) -> None:
    """Write a task's staged files (data.csv, README.md; trial.csv for obs_vs_rct), print its
    public metadata."""
    task = build(task_id, key_file)
    try:
        write_staged(task.public, out)
    except OSError as exc:
        fail(str(exc))
    emit(task.public.metadata())


@app.command()
def inspect(
    task_id: TaskIdArgument,
    reveal: Annotated[
        bool, typer.Option("--reveal", help="Print the hidden truth (debugging).")
    ] = False,
    key_file: KeyFileOption = None,
) -> None:
    """Print a task's public metadata, or with --reveal its hidden truth."""
    task = build(task_id, key_file)
    if not reveal:
        typer.echo("note: hidden truth not shown; pass --reveal to print it", err=True)
        emit(task.public.metadata())
        return
    emit({**task.hidden.reveal(), "n_rows": task.public.n_rows})


@app.command()
def reference(
    directory: Annotated[
        Path, typer.Argument(help="A staged task directory (README.md and the data files).")
    ],
) -> None:
    """Print the honest reference submission for a staged directory."""
    from causal_gym.reference.analyst import ReadmeFormatError
    from causal_gym.reference.answer import directory_answer

    try:
        answer = directory_answer(directory)
    except (OSError, ReadmeFormatError, KeyError) as exc:
        fail(f"cannot analyse {directory}: {exc}")
    emit(answer)
