"""`causal-gym`: materialize and inspect tasks from the command line.

Bad input (task id, key) is a one-line error and exit code 2, before anything is
written. Tracebacks never print locals: a local could be a key.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from causal_gym.errors import CausalGymError, StagingError
from causal_gym.generate import generate_task
from causal_gym.rng_keys.derive import KEY_ENV_VAR, DerivationKey, read_key_file, resolve_key
from causal_gym.task import STAGED_FILES, PublicTask, Task
from causal_gym.task_id import TaskId

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Procedurally generated causal-inference tasks: materialize, inspect.",
)

KeyFileOption = Annotated[
    Path | None,
    typer.Option(
        "--key-file", help=f"File holding the hex key (env {KEY_ENV_VAR} takes precedence)."
    ),
]
EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_key(key_file: Path | None) -> DerivationKey:
    configured = None
    if key_file is not None:
        configured = read_key_file(key_file)
        if os.environ.get(KEY_ENV_VAR, "").strip():
            typer.echo(f"note: {KEY_ENV_VAR} is set and takes precedence over --key-file", err=True)
    return resolve_key(configured, configured_source=f"key file {key_file}")


def build(task_id: str, key_file: Path | None) -> Task:
    try:
        return generate_task(TaskId.parse(task_id), load_key(key_file))
    except CausalGymError as exc:
        fail(str(exc))


def write_staged(task: PublicTask, out: Path) -> None:
    """Write exactly the staged files; each lands whole (temp file + rename) or not at all."""
    if out.exists() and not out.is_dir():
        raise StagingError(f"--out {out} exists and is not a directory")
    if out.is_dir():
        extra = sorted(p.name for p in out.iterdir() if p.name not in STAGED_FILES)
        if extra:
            raise StagingError(
                f"--out {out} already holds other files ({', '.join(extra[:3])}); "
                "give an empty or new directory"
            )
    out.mkdir(parents=True, exist_ok=True)
    for name in STAGED_FILES:
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(task.files[name])
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, out / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def emit(payload: dict[str, Any]) -> None:
    typer.echo(json.dumps(payload, indent=2))


@app.command()
def materialize(
    task_id: Annotated[str, typer.Argument(help="Public id <namespace>:<family>:<index>.")],
    out: Annotated[
        Path, typer.Option("--out", help="Directory that receives data.csv and README.md.")
    ],
    key_file: KeyFileOption = None,
) -> None:
    """Write a task's data.csv and README.md, print its public metadata."""
    task = build(task_id, key_file)
    try:
        write_staged(task.public, out)
    except (StagingError, OSError) as exc:
        fail(str(exc))
    emit(task.public.metadata())


@app.command()
def inspect(
    task_id: Annotated[str, typer.Argument(help="Public id <namespace>:<family>:<index>.")],
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


def main() -> None:
    app(prog_name="causal-gym")


if __name__ == "__main__":
    sys.exit(main())
