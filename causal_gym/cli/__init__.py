"""`causal-gym` command line: importing the command modules registers them on `app`."""

from causal_gym.cli import tasks, scoring, audit, manifest, export  # noqa: F401, I001  (registration order = help order)
from causal_gym.cli.common import app


def main() -> None:
    app(prog_name="causal-gym")


__all__ = ["app", "main"]
