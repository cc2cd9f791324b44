"""`causal-gym-run`: importing the command modules registers them on `app`."""

from orchestrator.cli import episode, sandbox  # noqa: F401  (registration)
from orchestrator.cli.common import app


def main() -> None:
    app(prog_name="causal-gym-run")


__all__ = ["app", "main"]
