"""Helpers every `causal-gym` command shares: the app, key loading, errors, output.

Bad input exits 2 with one line on stderr, before anything is written. Tracebacks
never print locals: a local could be a key.

Command modules import only typer and the standard library at the top; the generator,
numpy and pandas load inside the command that needs them, so `--help` answers at once
(scripts/bench_cli.py measures it).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from causal_gym.errors import CausalGymError
from causal_gym.rng_keys.keys import KEY_ENV_VAR

if TYPE_CHECKING:
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.task import Task


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Procedurally generated causal-inference tasks: materialize, score, audit.",
)

KeyFileOption = Annotated[
    Path | None,
    typer.Option("--key-file", help=f"File holding the hex key (env {KEY_ENV_VAR} wins over it)."),
]
TaskIdArgument = Annotated[str, typer.Argument(help="Public id <namespace>:<family>:<index>.")]
EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_key(key_file: Path | None) -> DerivationKey:
    from causal_gym.rng_keys.keys import read_key_file, resolve_key

    try:
        configured = None
        if key_file is not None:
            configured = read_key_file(key_file)
            if os.environ.get(KEY_ENV_VAR, "").strip():
                typer.echo(
                    f"note: {KEY_ENV_VAR} is set and takes precedence over --key-file", err=True
                )
        return resolve_key(configured, configured_source=f"key file {key_file}")
    except CausalGymError as exc:
        fail(str(exc))


def build(task_id: str, key_file: Path | None) -> Task:
    from causal_gym.make import generate_task
    from causal_gym.task_id import TaskId

    key = load_key(key_file)
    try:
        return generate_task(TaskId.parse(task_id), key)
    except CausalGymError as exc:
        fail(str(exc))


def emit(payload: dict[str, Any] | list[Any]) -> None:
    typer.echo(json.dumps(payload, indent=2))


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """The file lands whole (temp file in the same directory + rename) or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
