"""`causal-gym-run`: importing the command modules registers them on `app`."""

import signal
import sys

from orchestrator.cli import (  # noqa: F401  (registration)
    episode,
    export,
    run,
    sandbox,
    stream,
    stream_openenv,
    stream_serve,
)
from orchestrator.cli.common import app

#: Subcommands that never start Ray (a bare invocation runs a split on Ray).
_WITHOUT_RAY = ("episode", "export", "sandbox", "--help", "-h")
#: Subcommands that hold a consumer token and never a key (their child gets an
#: environment without CAUSAL_GYM_KEY).
_WITHOUT_KEY = (["stream", "openenv"],)


def _terminate(signum: int, frame: object) -> None:
    # SIGTERM (a scheduler, `kill`, a container stop) ends a run the way Ctrl-C does:
    # finished results stay, actors, sandboxes, the key file and a local model
    # server are cleaned up by the same `finally` blocks.
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    args = sys.argv[1:]
    if args and args[0] not in _WITHOUT_RAY and args[:2] not in _WITHOUT_KEY:
        # A run hands work to Ray, which copies this process's environment to every
        # worker: the key leaves it first (a 0600 file, then a re-exec without it).
        from orchestrator.errors import StateFolderError
        from orchestrator.run.head_key import take_key_from_environment

        try:
            take_key_from_environment()
        except StateFolderError as exc:  # the key's folder is not private: nothing written
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
    app(prog_name="causal-gym-run")


__all__ = ["app", "main"]
