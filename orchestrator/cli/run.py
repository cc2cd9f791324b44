"""`causal-gym-run [--config FILE] [--split ...] [-n N] ...`: a whole run on Ray.

The app's root callback: with no subcommand, the options describe a run. A config file
gives the defaults; every flag given on the command line overrides it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from orchestrator.cli.common import AGENT_HELP, app, check_seconds, fail

Opt = typer.Option


@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    config: Annotated[
        Path | None, Opt("--config", help="A TOML run config (configs/*.toml).")
    ] = None,
    split: Annotated[
        str | None, Opt("--split", help="eval-v1, eval-v2, eval-expert-v1, eval-v3 or train.")
    ] = None,
    n: Annotated[
        int | None, Opt("-n", help="Number of tasks (eval-v1: all 500 by default).")
    ] = None,
    per_family: Annotated[
        int | None, Opt("--per-family", help="A frozen split: this many tasks of each family.")
    ] = None,
    start: Annotated[int | None, Opt("--start", help="First position in the split.")] = None,
    agent: Annotated[str | None, Opt("--agent", help=AGENT_HELP)] = None,
    sandbox: Annotated[str | None, Opt("--sandbox", help="local or docker.")] = None,
    image: Annotated[str | None, Opt("--image", help="Docker base image.")] = None,
    concurrency: Annotated[int | None, Opt("--concurrency", help="Episodes in flight.")] = None,
    episodes_per_actor: Annotated[
        int | None, Opt("--episodes-per-actor", help="Episodes one sandbox actor runs at once.")
    ] = None,
    cpus_per_episode: Annotated[float | None, Opt("--cpus-per-episode")] = None,
    timeout: Annotated[float | None, Opt("--timeout", help="Episode budget (s).")] = None,
    max_turns: Annotated[int | None, Opt("--max-turns")] = None,
    out: Annotated[Path | None, Opt("--out", help="Run folder.")] = None,
    resume: Annotated[bool, Opt("--resume", help="Finish the run in --out.")] = False,
    address: Annotated[
        str | None, Opt("--address", help="Ray cluster (default: embedded).")
    ] = None,
    connect_timeout: Annotated[
        float | None, Opt("--connect-timeout", help="Seconds to join --address (30).")
    ] = None,
    base_url: Annotated[str | None, Opt("--base-url", help="OpenAI-compatible URL.")] = None,
    model: Annotated[str | None, Opt("--model")] = None,
    api_key_env: Annotated[
        str | None, Opt("--api-key-env", help="Variable holding the API key.")
    ] = None,
    key_file: Annotated[Path | None, Opt("--key-file", help="File holding the hex key.")] = None,
    inspect_log: Annotated[
        bool | None,
        Opt("--inspect-log", help="Also write an inspect_ai log (.eval) of the run at the end."),
    ] = None,
) -> None:
    """Run agents over a split on Ray (embedded local Ray, or a cluster with --address),
    score them on the head, write results.jsonl, summary.json, report.md and plots."""
    if ctx.invoked_subcommand is not None:
        return
    from orchestrator.run.config import ConfigError, load_config

    if timeout is not None:
        check_seconds("--timeout", timeout)
    if connect_timeout is not None:
        check_seconds("--connect-timeout", connect_timeout)
    openai: dict[str, Any] = {
        k: v
        for k, v in {"base_url": base_url, "model": model, "api_key_env": api_key_env}.items()
        if v is not None
    }
    overrides: dict[str, Any] = {
        "split": split,
        "n": n,
        "per_family": per_family,
        "start": start,
        "agent": agent,
        "sandbox": sandbox,
        "image": image,
        "concurrency": concurrency,
        "episodes_per_actor": episodes_per_actor,
        "cpus_per_episode": cpus_per_episode,
        "episode_timeout_s": timeout,
        "max_turns": max_turns,
        "out": str(out) if out else None,
        "address": address,
        "connect_timeout_s": connect_timeout,
        "openai": openai or None,
        "inspect_log": inspect_log,
    }
    if config is None and not any(v is not None for v in overrides.values()) and not resume:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    try:
        settings = load_config(config, overrides)
        settings.task_ids()  # a split too small for -n is an error now, not later
    except ConfigError as exc:
        fail(str(exc))
    _run(settings, key_file, resume)


def run_key(key_file: Path | None) -> Any:
    """The run's key: the moved CAUSAL_GYM_KEY, else --key-file, else the default;
    afterwards the variable is out of this process's environment (Ray copies it)."""
    from causal_gym.errors import CausalGymError
    from causal_gym.rng_keys.keys import KEY_ENV_VAR, read_key_file, resolve_key
    from orchestrator.run.head_key import key_from_moved_file

    moved = key_from_moved_file()
    try:
        environ = {KEY_ENV_VAR: moved} if moved is not None else dict(os.environ)
        configured = read_key_file(key_file) if key_file else None
        key = resolve_key(configured, environ=environ, configured_source=f"key file {key_file}")
    except CausalGymError as exc:
        fail(str(exc))
    os.environ.pop(KEY_ENV_VAR, None)  # never handed to Ray
    return key


def execute_or_fail(settings: Any, key: Any, resume: bool, console: Any) -> Any:
    """One run; errors before any work exit 2, errors during it exit 1."""
    from causal_gym.errors import CausalGymError
    from orchestrator.errors import (
        AgentSpecError,
        ClusterError,
        OrchestratorError,
        RunFolderError,
        StateFolderError,
    )
    from orchestrator.run.config import ConfigError
    from orchestrator.run.session import execute

    before_any_work = (RunFolderError, ClusterError, ConfigError, AgentSpecError, StateFolderError)
    try:
        return execute(settings, key, resume, console)
    except before_any_work as exc:
        fail(str(exc))
    except (OrchestratorError, CausalGymError) as exc:
        fail(str(exc), code=1)
    except KeyboardInterrupt:
        fail(f"interrupted: finished episodes are in {settings.out}; rerun with --resume", code=130)


def _run(settings: Any, key_file: Path | None, resume: bool) -> None:
    from rich.console import Console

    from orchestrator.records.report import baseline_table
    from orchestrator.run.display import say

    if settings.inspect_log:
        require_inspect_or_fail()
    key = run_key(key_file)
    console = Console(stderr=True, soft_wrap=True)  # paths and commands stay whole lines
    summary, folder = execute_or_fail(settings, key, resume, console)
    for line in baseline_table([summary]):
        typer.echo(line)
    say(console, "wrote summary.json, report.md and plots in:", folder)
    if settings.inspect_log:
        say(console, *write_inspect_log(folder))


def require_inspect_or_fail() -> None:
    """An inspect log needs the `inspect` extra: say so before any work (exit 2)."""
    from orchestrator.errors import InspectLogError
    from orchestrator.export.inspect_log import require_inspect

    try:
        require_inspect()
    except InspectLogError as exc:
        fail(str(exc))


def write_inspect_log(
    folder: Path, out: Path | None = None, label: str = "", directory: Path | None = None
) -> list[str]:
    """Export a finished run folder's inspect log; the lines to print, or exit 2 (not a
    run folder this head can verify) or 1 (writing failed)."""
    from orchestrator.errors import OrchestratorError, RunFolderError, StateFolderError
    from orchestrator.export.inspect_log import export_inspect, summary_lines

    try:
        return summary_lines(export_inspect(folder, out, label, directory))
    except (RunFolderError, StateFolderError) as exc:
        fail(str(exc))
    except OrchestratorError as exc:
        fail(str(exc), code=1)


@app.command()
def baselines(
    config: Annotated[Path, Opt("--config", help="A baselines config (configs/baselines.toml).")],
    out: Annotated[
        Path | None, Opt("--out", help="Baselines folder (default: the config's out).")
    ] = None,
    resume: Annotated[
        bool, Opt("--resume", help="Finish the agents of the baselines folder --out.")
    ] = False,
    key_file: Annotated[Path | None, Opt("--key-file", help="File holding the hex key.")] = None,
) -> None:
    """Run several agents over the same sample and write one baseline table
    (baselines.md, baselines.json, baselines.png) from their runs."""
    import secrets
    import time

    from rich.console import Console

    from orchestrator.errors import LocalModelError
    from orchestrator.host.private_files import private_folder
    from orchestrator.run.baselines import load_baselines, run_configs, write_outputs
    from orchestrator.run.config import ConfigError

    try:
        settings = load_baselines(config, out)
        pattern = str(settings.out)
        if resume and "{run_id}" in pattern:
            raise ConfigError("--resume needs --out naming the baselines folder to finish")
        run_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        folder = Path(pattern.format(run_id=run_id))
        if folder.exists() and not resume:
            raise ConfigError(f"{folder} exists: pass --resume to finish it, or another --out")
        runs = run_configs(settings, folder)
    except ConfigError as exc:
        fail(str(exc))
    if settings.inspect_logs:
        require_inspect_or_fail()
    key = run_key(key_file)
    from orchestrator.agents.loader import check_agent_loads
    from orchestrator.errors import AgentSpecError

    try:  # every agent loads before the first one runs
        for run in runs:
            check_agent_loads(run.agent, (key.raw.hex(),))
    except AgentSpecError as exc:
        fail(str(exc))
    from orchestrator.run.display import say

    console = Console(stderr=True, soft_wrap=True)  # paths and commands stay whole lines
    private_folder(folder)
    summaries = []
    for entry, run in zip(settings.agents, runs, strict=True):
        again = resume and (Path(run.out) / "run.json").exists()
        say(console, f"baselines: {run.model_label or run.agent}, output in:", run.out)
        server = entry.local_server()
        try:
            if server is not None:
                console.print(f"baselines: starting the local model at {server.base_url}")
                server.start()
            summary, _ = execute_or_fail(run, key, again, console)
        except LocalModelError as exc:
            fail(f"agent {entry.folder_name}: {exc}")
        finally:
            if server is not None:
                server.stop()
        summaries.append(summary)
        if settings.inspect_logs:  # one log per agent, beside the table
            say(console, *write_inspect_log(run.out, label=entry.folder_name, directory=folder))
    typer.echo(write_outputs(summaries, folder), nl=False)
    say(console, "wrote baselines.md, baselines.json and baselines.png in:", folder)
