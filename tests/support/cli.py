"""Run the CLIs in-process (typer's CliRunner): the same commands, exit codes and
streams as the console scripts, without paying the interpreter start and the imports
of a subprocess per call. One test per CLI still goes through the real entry point."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from typer.testing import CliRunner

from causal_gym.rng_keys.keys import KEY_ENV_VAR


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def invoke(app: Any, *args: str, env_key: str | None = None, **env: str) -> Run:
    """Invoke `app` with CAUSAL_GYM_KEY unset unless `env_key` is given."""
    overrides: dict[str, str | None] = {KEY_ENV_VAR: env_key, **env}
    result = CliRunner().invoke(app, list(args), env=overrides, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def causal_gym_cli(*args: str, env_key: str | None = None, **env: str) -> Run:
    from causal_gym.cli import app

    return invoke(app, *args, env_key=env_key, **env)


def orchestrator_cli(*args: str, **env: str) -> Run:
    from orchestrator.cli import app

    return invoke(app, *args, **env)
