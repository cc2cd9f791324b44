"""`causal-gym-run stream openenv --url URL --token-file FILE`: an OpenEnv server whose
sessions are tasks from a running stream (integrations/openenv_server.py).

OpenEnv 0.10 cannot share a virtualenv with verifiers 0.4 (their mcp pins exclude each
other), so the server runs in `.venv-openenv` (scripts/setup_protocols.sh makes it) or
under the interpreter `--python` names. Every option is checked here first, each bad
one one line and exit 2; then this process becomes the server (exec), in the
foreground, printing one JSON line with its URLs once it listens.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.common import check_seconds, fail
from orchestrator.cli.stream import stream_app

#: Where scripts/setup_protocols.sh puts the OpenEnv virtualenv's interpreter.
OPENENV_PYTHON = Path(__file__).resolve().parents[2] / ".venv-openenv" / "bin" / "python"
MAX_SESSIONS = 64


def _openenv_python(given: Path | None) -> str:
    if given is not None:
        if not os.access(given, os.X_OK):
            fail(f"--python {given}: not an executable interpreter")
        return str(given)
    if importlib.util.find_spec("openenv") is not None:
        return sys.executable
    if os.access(OPENENV_PYTHON, os.X_OK):
        return str(OPENENV_PYTHON)
    fail(
        "OpenEnv 0.10 is not installed for this server: run `bash scripts/setup_protocols.sh` "
        "(it makes .venv-openenv) or give --python, an interpreter with openenv==0.10.0"
    )


@stream_app.command("openenv")
def openenv_command(
    url: Annotated[str, typer.Option("--url", help="The stream's URL.")],
    token_file: Annotated[
        Path, typer.Option("--token-file", help="The consumer token's file (0600).")
    ],
    host: Annotated[str, typer.Option(help="Where to listen.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="0 picks a free port.")] = 8700,
    max_sessions: Annotated[int, typer.Option(help="Concurrent sessions (sandboxes).")] = 4,
    idle_timeout: Annotated[
        float, typer.Option(help="Seconds without a message before a session is closed.")
    ] = 600.0,
    max_tool_calls: Annotated[
        int, typer.Option(help="Tool calls an episode may make before it ends unscored.")
    ] = 64,
    sandbox: Annotated[str, typer.Option(help="The sandbox backend of every session.")] = "local",
    python: Annotated[
        Path | None, typer.Option(help="An interpreter with openenv==0.10.0.")
    ] = None,
) -> None:
    """Serve OpenEnv sessions (WebSocket /ws) on tasks from the stream at --url; clients
    send the consumer token as 'Authorization: Bearer TOKEN'."""
    from orchestrator.sandbox.registry import backend_names

    if not url.startswith(("http://", "https://")):
        fail(f"--url must be the stream's http:// or https:// URL, got {url[:80]!r}")
    try:
        if not token_file.read_text().strip():
            fail(f"--token-file {token_file} is empty: mint one with `stream token mint`")
    except OSError as exc:
        fail(f"--token-file {token_file}: {exc.strerror or exc}")
    if not 0 <= port <= 65535:
        fail(f"--port must be in 0..65535, got {port}")
    if not 1 <= max_sessions <= MAX_SESSIONS:
        fail(f"--max-sessions must be in 1..{MAX_SESSIONS}, got {max_sessions}")
    if not 1 <= max_tool_calls <= 10_000:
        fail(f"--max-tool-calls must be in 1..10000, got {max_tool_calls}")
    check_seconds("--idle-timeout", idle_timeout)
    if sandbox not in backend_names():
        fail(f"unknown sandbox {sandbox!r}: accepted sandboxes are {', '.join(backend_names())}")
    interpreter = _openenv_python(python)
    argv = [interpreter, "-m", "orchestrator.integrations.openenv_server", "--url", url,
            "--token-file", str(token_file), "--host", host, "--port", str(port),
            "--max-sessions", str(max_sessions), "--idle-timeout", repr(idle_timeout),
            "--max-tool-calls", str(max_tool_calls), "--sandbox", sandbox]  # fmt: skip
    # the server holds a consumer token only: a key in this environment stays behind
    env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(interpreter, argv, env)
