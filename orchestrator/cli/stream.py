"""`causal-gym-run stream serve|start|status|stop|export-key|token|episodes|policy-version
NAME`: trainer streams served over HTTP.

`serve` (stream_serve.py) runs a stream in the foreground (what a service manager
runs); `start` runs the same in the background and returns once it answers. The
operator's commands find the stream by name through its state folder
(~/.causal-gym/streams/NAME: the URLs and the operator token, 0600) and talk to its
operator listener over HTTP with the operator token.
"""

from __future__ import annotations

import contextlib
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
_MAX_HANDLES_HELP = "This consumer's cap on unscored handles (default: the stream's per-consumer)."


def _state_dir(name: str, state_dir: Path | None) -> Path:
    from orchestrator.stream.options import default_state_dir
    from orchestrator.stream.tokens import CONSUMER_NAME

    if not CONSUMER_NAME.match(name):
        fail(f"stream names are 1-64 letters, digits, '.', '_' or '-', got {name[:80]!r}")
    return state_dir or default_state_dir(name)


def _operator(name: str, state_dir: Path | None) -> Any:
    """The operator's client, on the operator listener (stream.json's operator_url),
    once the stream's process is known to be the one that wrote the state: a stale
    state folder's port may since belong to anyone, who would receive the token."""
    from orchestrator.errors import StreamError
    from orchestrator.host.owners import owner_alive
    from orchestrator.stream.client import StreamOperator
    from orchestrator.stream.server import read_state

    folder = _state_dir(name, state_dir)
    try:
        state = read_state(folder)
        if not owner_alive(str(state.get("owner", ""))):
            raise StreamError("its process is gone (stale state)", "not_found")
        token = Path(state["token_file"]).read_text().strip()
    except (StreamError, OSError, KeyError) as exc:
        fail(f"no running stream {name!r} (state in {folder}): {exc}")
    url = state.get("operator_url") or state["url"]
    return StreamOperator(url, token, timeout_s=60, connect_timeout_s=10)


def _call(function: Any, *args: Any) -> Any:
    from orchestrator.errors import StreamError

    try:
        return function(*args)
    except StreamError as exc:
        fail(str(exc), code=1 if exc.code == "unavailable" else 2)


@stream_app.command(
    "start", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def start(ctx: typer.Context, name: NameArgument, state_dir: StateOption = None) -> None:
    """`serve` in the background (log in the state folder); returns once it answers and
    prints its URL, key fingerprint and operator token file as JSON."""
    from orchestrator.host.private_files import private_file, private_folder
    from orchestrator.stream.server import STATE_FILE

    chosen = _state_dir(name, state_dir)
    made_folder = not chosen.exists()
    folder = private_folder(chosen)
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
            for line in lines[:-1]:
                if line.startswith("warning: "):
                    typer.echo(line, err=True)
            if made_folder:  # a start that failed leaves nothing it made
                log_path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    folder.rmdir()
            fail(lines[-1].removeprefix("error: ") if lines else "the stream did not start",
                 code=child.returncode or 1)  # fmt: skip
        state_file = folder / STATE_FILE
        if state_file.exists():
            state = json.loads(state_file.read_text())
            if state.get("pid") == child.pid:
                for line in log_path.read_text(errors="replace").splitlines():
                    if line.startswith("warning: "):
                        typer.echo(line, err=True)
                shown = ("name", "url", "operator_url", "key_fingerprint", "token_file")
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
    max_handles: Annotated[
        int | None,
        typer.Option("--max-handles", min=1, help=_MAX_HANDLES_HELP),
    ] = None,
    state_dir: StateOption = None,
) -> None:
    """A new consumer token (printed once, or written to --to)."""
    token = _call(_operator(name, state_dir).mint, consumer, max_handles)
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
    """Configure episode mode from a file: [endpoint] base_url, model, api_key_file (a
    file's name in the stream's endpoint-secrets folder) or api_key, ...; batch_size,
    buffer_factor, policy_version, max_turns, episode_timeout_s."""
    from orchestrator.errors import ConfigError
    from orchestrator.run.config_files import read_json, read_toml

    try:
        reader = read_json if config.suffix == ".json" else read_toml
        settings = reader(config, "episode settings")
    except ConfigError as exc:
        fail(str(exc))
    bound = _call(_operator(name, state_dir).configure, settings)
    typer.echo(json.dumps({"stream": name, "bound": bound}))


@stream_app.command("policy-version")
def policy_version(
    name: NameArgument,
    version: Annotated[int, typer.Argument(min=0, help="The version the endpoint serves now.")],
    state_dir: StateOption = None,
) -> None:
    """Set episode mode's policy version (after pushing new weights to the endpoint):
    rollouts begun from now on carry it. The operator's alone: one consumer moving it
    would move it for every consumer."""
    _call(_operator(name, state_dir).set_policy_version, version)
    typer.echo(json.dumps({"stream": name, "policy_version": version}))
