"""The `causal-gym-run` app and helpers its command modules share."""

from __future__ import annotations

from typing import NoReturn

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Run causal-gym at scale: sandboxes, episodes, evaluation runs.",
)
EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
