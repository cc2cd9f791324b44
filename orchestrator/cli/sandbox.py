"""`causal-gym-run sandbox ...`: see exactly what an agent sees, build toolchains, reap."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from orchestrator.cli.common import app, check_seconds, fail
from orchestrator.errors import OrchestratorError

sandbox_app = typer.Typer(
    help="Sandboxes agents run in.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(sandbox_app, name="sandbox")

SandboxOption = Annotated[str, typer.Option("--sandbox", help="local (bubblewrap) or docker.")]
ImageOption = Annotated[str | None, typer.Option("--image", help="Docker base image.")]


def _kind(value: str) -> str:
    from orchestrator.sandbox.registry import backend

    try:
        backend(value)
    except ValueError as exc:
        fail(str(exc))
    return value


@sandbox_app.command(
    "exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def exec_command(
    ctx: typer.Context,
    sandbox: SandboxOption = "local",
    stage: Annotated[str | None, typer.Option("--stage", help="Stage this task's files.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Deadline (s).")] = 60.0,
    image: ImageOption = None,
) -> None:
    """Run one command in a fresh sandbox: causal-gym-run sandbox exec -- CMD..."""
    from causal_gym.errors import CausalGymError
    from orchestrator.sandbox import SandboxLimits, make_sandbox

    check_seconds("--timeout", timeout)
    argv = list(ctx.args)
    if not argv:
        fail("give the command after --, e.g. causal-gym-run sandbox exec -- ls -la")
    files: dict[str, bytes] = {}
    if stage is not None:
        from causal_gym.make import generate_task
        from causal_gym.rng_keys.keys import resolve_key
        from causal_gym.task_id import TaskId

        try:
            files = dict(generate_task(TaskId.parse(stage), resolve_key()).public.files)
        except CausalGymError as exc:
            fail(str(exc))
    try:
        box = make_sandbox(_kind(sandbox), SandboxLimits(), image)
        with box:
            box.open(files)
            result = box.exec(argv if len(argv) > 1 else argv[0], timeout)
    except OrchestratorError as exc:
        fail(str(exc), code=1)
    typer.echo(result.stdout, nl=False)
    typer.echo(result.stderr, nl=False, err=True)
    summary = {
        "sandbox": sandbox,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "truncated": result.truncated,
        "seconds": round(result.duration_s, 3),
    }
    typer.echo(json.dumps(summary), err=True)
    raise typer.Exit(0 if result.ok else 1)


@sandbox_app.command("setup")
def setup(sandbox: SandboxOption = "local", image: ImageOption = None) -> None:
    """Build (once) the analyst toolchain: the local venv or the Docker analyst image."""
    from orchestrator.sandbox.registry import backend, load

    try:
        typer.echo(load(backend(_kind(sandbox)).setup)(image))
    except OrchestratorError as exc:
        fail(str(exc), code=1)


@sandbox_app.command("reap")
def reap(run_id: Annotated[str | None, typer.Option("--run-id")] = None) -> None:
    """Remove what dead runs left: their key files, the processes of embedded Ray
    instances whose runner is gone, local sandboxes (workspaces, mounts, cgroups) whose
    owner process is gone, and Docker containers (also those of --run-id)."""
    import re

    from orchestrator.errors import StateFolderError
    from orchestrator.records.layout import RUN_ID_PATTERN
    from orchestrator.run.leftovers import reap_dead_runs

    if run_id is not None and not re.match(RUN_ID_PATTERN, run_id):
        fail(f"--run-id {run_id[:80]!r} is not a run id (1-128 letters, digits, '.', '_', '-')")
    try:
        report = reap_dead_runs(run_id)
    except StateFolderError as exc:
        fail(str(exc))
    except OrchestratorError as exc:
        fail(str(exc), code=1)
    typer.echo(json.dumps(report))
