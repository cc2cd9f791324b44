"""The `causal-gym-run` app and helpers its command modules share."""

from __future__ import annotations

import math
from typing import NoReturn

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Run causal-gym at scale: sandboxes, episodes, evaluation runs.",
)
EXIT_BAD_INPUT = 2
#: Written out (not imported from the loader) so `--help` loads no agent code.
AGENT_HELP = (
    "openai, reference, diff-in-means, post-treatment, linear-ols, constant, narrow, "
    "pooled-for-every-level, per-level-difference-in-means, total-as-direct, "
    "mediator-as-confounder, observational-only, trial-only, always-biased, escape, "
    "simulated:TURN_SECONDS:TURNS or python:PATH_OR_MODULE:ClassName."
)


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
