"""The `causal-gym-run` app and helpers its command modules share."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from orchestrator.agents.registry import accepted as accepted_agents


class OneLineErrors(TyperGroup):
    """Usage errors (a flag of the wrong type, an unknown option) as one `error:` line
    and exit 2, like every other bad input, instead of click's usage box."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # typer's usage and parameter errors
            if not standalone_mode:
                raise
            message = str(exc.format_message())
            if message.startswith("Usage:"):  # a group called without its command: help
                typer.echo(message, err=True)
            else:
                typer.echo(f"error: {message} (see --help)", err=True)
            sys.exit(getattr(exc, "exit_code", EXIT_BAD_INPUT))
        except typer.Abort:
            if not standalone_mode:
                raise
            typer.echo("error: aborted", err=True)
            sys.exit(130)
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Run causal-gym at scale: sandboxes, episodes, evaluation runs.",
)
EXIT_BAD_INPUT = 2
#: From the agent registry, which names entry points and loads no agent code.
AGENT_HELP = accepted_agents(light=True) + "."


#: The longest budget any command accepts (a day): beyond it, a typo, not a plan.
MAX_SECONDS = 86_400.0


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def check_seconds(option: str, value: float) -> float:
    """A duration option must be a finite number of seconds in (0, MAX_SECONDS]."""
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        fail(f"{option} must be a number of seconds in (0, {MAX_SECONDS:g}], got {value:g}")
    return value
