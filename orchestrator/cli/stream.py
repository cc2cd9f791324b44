"""`causal-gym-run stream serve|start|status|stop|export-key|token|episodes NAME`:
trainer streams served over HTTP.

`serve` runs a stream in the foreground (what a service manager runs); `start` runs the
same in the background and returns once it answers. The operator's commands find the
stream by name through its state folder (~/.causal-gym/streams/NAME: the URL and the
operator token, 0600) and talk to it over HTTP with the operator token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from orchestrator.cli.common import app, fail
from orchestrator.stream import DEFAULT_SPLIT

stream_app = typer.Typer(
    help="Fresh-key infinite task streams for RL trainers, over HTTP.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(stream_app, name="stream")
NameArgument = Annotated[str, typer.Argument(help="The stream's name.")]
StateOption = Annotated[
    Path | None,
    typer.Option("--state-dir", help="The stream's state folder (~/.causal-gym/streams/NAME)."),
]
_FAMILIES_HELP = f"Comma-separated (default: the families of {DEFAULT_SPLIT})."


def _state_dir(name: str, state_dir: Path | None) -> Path:
    from orchestrator.stream.server import default_state_dir
    from orchestrator.stream.tokens import CONSUMER_NAME

    if not CONSUMER_NAME.match(name):
        fail(f"stream names are 1-64 letters, digits, '.', '_' or '-', got {name[:80]!r}")
    return state_dir or default_state_dir(name)


def _operator(name: str, state_dir: Path | None) -> Any:
    from orchestrator.errors import StreamError
    from orchestrator.stream.client import StreamOperator
    from orchestrator.stream.server import read_state

    folder = _state_dir(name, state_dir)
    try:
        state = read_state(folder)
        token = Path(state["token_file"]).read_text().strip()
    except (StreamError, OSError, KeyError) as exc:
        fail(f"no running stream {name!r} (state in {folder}): {exc}")
    return StreamOperator(state["url"], token, timeout_s=60, connect_timeout_s=10)


def _call(function: Any, *args: Any) -> Any:
    from orchestrator.errors import StreamError

    try:
        return function(*args)
    except StreamError as exc:
        fail(str(exc), code=1 if exc.code == "unavailable" else 2)


def _serve_options(
    name: str,
    families: str | None,
    state_dir: Path | None,
    host: str,
    port: int,
    workers: int | None,
    address: str | None,
    handle_ttl: float,
    sandbox: str,
    concurrency: int,
    episodes_per_actor: int,
    certfile: str | None,
    keyfile: str | None,
) -> Any:
    from causal_gym.task_id import FAMILIES
    from orchestrator.stream import default_families
    from orchestrator.stream.handout import Limits
    from orchestrator.stream.server import ServeOptions

    listed = families if families is not None else ",".join(default_families())
    chosen = tuple(f.strip() for f in listed.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown or not chosen:
        fail(f"unknown families {unknown}: accepted families are {', '.join(FAMILIES)}")
    from orchestrator.sandbox.registry import backend

    try:
        backend(sandbox)
    except ValueError as exc:
        fail(str(exc))
    if (certfile is None) != (keyfile is None):
        fail("TLS needs both --ssl-certfile and --ssl-keyfile")
    return ServeOptions(
        name=name,
        families=chosen,
        state_dir=_state_dir(name, state_dir),
        host=host,
        port=port,
        workers=workers or os.cpu_count() or 1,
        address=address,
        limits=Limits(handle_ttl_s=handle_ttl),
        episode_options={
            "sandbox": sandbox,
            "concurrency": concurrency,
            "episodes_per_actor": episodes_per_actor,
        },
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )


@stream_app.command("serve")
def serve_command(
    name: NameArgument,
    families: Annotated[str | None, typer.Option("--families", help=_FAMILIES_HELP)] = None,
    state_dir: StateOption = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free.")] = 8600,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, max=64, help="Generator processes (cores).")
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster (default: embedded).")
    ] = None,
    handle_ttl: Annotated[
        float, typer.Option("--handle-ttl", min=1.0, help="Seconds a handle lives.")
    ] = 3600.0,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Episode mode's sandbox.")] = "local",
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Episodes in flight.")
    ] = 8,
    episodes_per_actor: Annotated[int, typer.Option("--episodes-per-actor", min=1)] = 8,
    certfile: Annotated[str | None, typer.Option("--ssl-certfile")] = None,
    keyfile: Annotated[str | None, typer.Option("--ssl-keyfile")] = None,
) -> None:
    """Serve a stream over HTTP in the foreground until stopped (SIGINT, SIGTERM or
    `stream stop`); it makes its own key, which never leaves its supply workers."""
    from orchestrator.errors import OrchestratorError
    from orchestrator.stream.server import serve

    options = _serve_options(
        name, families, state_dir, host, port, workers, address, handle_ttl,
        sandbox, concurrency, episodes_per_actor, certfile, keyfile,
    )  # fmt: skip
    try:
        serve(options)
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")
    except OrchestratorError as exc:
        fail(str(exc), code=2 if getattr(exc, "code", "") == "conflict" else 1)


@stream_app.command(
    "start", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def start(ctx: typer.Context, name: NameArgument, state_dir: StateOption = None) -> None:
    """`serve` in the background (log in the state folder); returns once it answers and
    prints its URL, key fingerprint and operator token file as JSON."""
    from orchestrator.run.results import private_file, private_folder
    from orchestrator.stream.server import STATE_FILE

    folder = private_folder(_state_dir(name, state_dir))
    log_path = folder / "serve.log"
    with private_file(log_path, "wb") as log:
        argv = [sys.executable, "-c", "from orchestrator.cli import main; main()", "stream",
                "serve", name, "--state-dir", str(folder), *ctx.args]  # fmt: skip
        child = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if child.poll() is not None:
            lines = [x for x in log_path.read_text(errors="replace").splitlines() if x.strip()]
            fail(lines[-1].removeprefix("error: ") if lines else "the stream did not start",
                 code=child.returncode or 1)  # fmt: skip
        state_file = folder / STATE_FILE
        if state_file.exists():
            state = json.loads(state_file.read_text())
            if state.get("pid") == child.pid:
                shown = ("name", "url", "key_fingerprint", "token_file")
                typer.echo(json.dumps({**{k: state[k] for k in shown}, "pid": child.pid}))
                return
        time.sleep(0.2)
    child.kill()
    fail("the stream did not answer within 300 s", code=1)


@stream_app.command("status")
def status(name: NameArgument, state_dir: StateOption = None) -> None:
    """Print the stream's counters (every consumer's) as JSON."""
    typer.echo(_call(_operator(name, state_dir).status).model_dump_json(indent=2))


@stream_app.command("stop")
def stop(name: NameArgument, state_dir: StateOption = None) -> None:
    """Stop a stream: its key and outstanding truths are gone for good."""
    folder = _state_dir(name, state_dir)
    operator = _operator(name, state_dir)
    _call(operator.stop)
    from orchestrator.stream.server import STATE_FILE

    deadline = time.monotonic() + 60
    while (folder / STATE_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    typer.echo(json.dumps({"stopped": name}))


@stream_app.command("export-key")
def export_key(
    name: NameArgument,
    to: Annotated[str, typer.Option("--to", help="A new file on the head (written 0600).")],
    state_dir: StateOption = None,
) -> None:
    """Write the stream's key to a new 0600 file on the head (for audits; keep it there)."""
    target = os.path.abspath(to)
    fingerprint = _call(_operator(name, state_dir).export_key, target)
    typer.echo(json.dumps({"stream": name, "key_fingerprint": fingerprint, "file": target}))


token_app = typer.Typer(help="Consumer tokens.", no_args_is_help=True, rich_markup_mode=None)
stream_app.add_typer(token_app, name="token")


@token_app.command("mint")
def mint(
    name: NameArgument,
    consumer: Annotated[str, typer.Argument(help="The consumer's name.")],
    to: Annotated[Path | None, typer.Option("--to", help="Write it to a new 0600 file.")] = None,
    state_dir: StateOption = None,
) -> None:
    """A new consumer token (printed once, or written to --to)."""
    token = _call(_operator(name, state_dir).mint, consumer)
    if to is None:
        typer.echo(token)
        return
    try:
        fd = os.open(to, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        _call(_operator(name, state_dir).revoke, consumer)
        fail(f"cannot write {to}: {exc.strerror or exc} (the token was revoked)")
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    typer.echo(json.dumps({"consumer": consumer, "token_file": str(to)}))


@token_app.command("revoke")
def revoke(
    name: NameArgument,
    consumer: Annotated[str, typer.Argument(help="The consumer's name.")],
    state_dir: StateOption = None,
) -> None:
    """Revoke a consumer token: its next request gets 401."""
    _call(_operator(name, state_dir).revoke, consumer)
    typer.echo(json.dumps({"revoked": consumer}))


@stream_app.command("episodes")
def episodes(
    name: NameArgument,
    config: Annotated[Path, typer.Option("--config", help="Episode settings (TOML or JSON).")],
    state_dir: StateOption = None,
) -> None:
    """Configure episode mode from a file: [endpoint] base_url, model, api_key_file, ...;
    batch_size, buffer_factor, policy_version, max_turns, episode_timeout_s."""
    from orchestrator.errors import ConfigError
    from orchestrator.run.config_files import read_toml

    try:
        settings = (
            json.loads(config.read_text())
            if config.suffix == ".json"
            else read_toml(config, "episode settings")
        )
    except (ConfigError, OSError, ValueError) as exc:
        fail(str(exc))
    bound = _call(_operator(name, state_dir).configure, settings)
    typer.echo(json.dumps({"stream": name, "bound": bound}))
