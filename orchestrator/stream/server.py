"""`causal-gym-run stream serve`: one stream's HTTP service on the head, until stopped.

Order, and why:

1. Join Ray (embedded by default, with the head resource; or a cluster's head).
2. Start the supply workers on the head (supply.py): worker 0 makes the key into a
   0600 file in a fresh 0700 folder named after this process, the others read it,
   and it is removed before any request is served. This process never reads it.
3. Make the operator token, write it to a new 0600 file in the stream's state folder
   (0700) and keep only its hash.
4. Serve the API (app.py) with uvicorn on a socket bound here (127.0.0.1 unless told
   otherwise; TLS with a certificate and key, or behind a reverse proxy), and write
   `stream.json` (URL, pid, key fingerprint) beside the token for the CLI.
5. On SIGINT, SIGTERM or the operator's stop: stop serving, stop episode production
   and the workers (the key and every truth go with them), remove the state files.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import StreamError
from orchestrator.owners import owner_alive, owner_token
from orchestrator.run.results import private_folder, write_atomically
from orchestrator.stream.handout import Limits
from orchestrator.stream.tokens import new_token

STATE_FILE, TOKEN_FILE = "stream.json", "operator.token"
#: The embedded Ray instance of a stream, tuned for it (bench_stream.py measured each):
#: a task's wire (100-400 KB) travels inline in the reply instead of through the object
#: store (the raylet's CPU per task fell by about two thirds), and no idle workers are
#: started ahead of need (they polled for a few percent of a core each). On a cluster,
#: set the same variables where `ray start` runs.
EMBEDDED_RAY = {
    "RAY_max_direct_call_object_size": str(8 << 20),
    "RAY_prestart_worker_first_driver": "0",
    "RAY_num_prestart_python_workers": "0",
}


def default_state_dir(name: str) -> Path:
    return Path.home() / ".causal-gym" / "streams" / name


@dataclass(frozen=True)
class ServeOptions:
    name: str
    families: tuple[str, ...]
    state_dir: Path
    host: str = "127.0.0.1"
    port: int = 0
    workers: int = 1
    address: str | None = None
    limits: Limits = field(default_factory=Limits)
    episode_options: dict[str, Any] = field(default_factory=dict)
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None


def read_state(state_dir: Path) -> dict[str, Any]:
    """The running stream's stream.json (URL, pid, fingerprint), or a StreamError."""
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise StreamError(f"no stream runs with state in {state_dir}", "not_found") from exc
    return state


def _claim(state_dir: Path) -> None:
    """Take the state folder, refusing one a live stream holds (a dead one's is reused)."""
    private_folder(state_dir)
    if (state_dir / STATE_FILE).exists():
        with contextlib.suppress(StreamError):
            if owner_alive(str(read_state(state_dir).get("owner", ""))):
                raise StreamError(f"a stream already runs with state in {state_dir}", "conflict")
    for name in (STATE_FILE, TOKEN_FILE):
        (state_dir / name).unlink(missing_ok=True)


def _start_supplies(options: ServeOptions, key_path: Path) -> tuple[list[Any], str]:
    import ray

    from orchestrator.run.config import HEAD_RESOURCE
    from orchestrator.stream.supply import TaskSupply

    # One thread: a score waits for at most the make in progress (tens of ms), and a
    # second thread bought no latency (generation holds the GIL through numpy's large
    # draws) but cost 16% more CPU per task.
    cls: Any = ray.remote(TaskSupply).options(
        num_cpus=0, resources={HEAD_RESOURCE: 0.001}, max_concurrency=1, max_restarts=0
    )
    args = (options.name, options.families)
    first = cls.remote(*args, 0, options.workers, str(key_path))
    fingerprint: str = ray.get(first.ready.remote(), timeout=120)
    rest = [cls.remote(*args, w, options.workers, str(key_path)) for w in range(1, options.workers)]
    if set(ray.get([r.ready.remote() for r in rest], timeout=120)) - {fingerprint}:
        raise StreamError("the supply workers do not hold one key", "unavailable")
    ray.get(first.remove_key_file.remote(str(key_path)))
    return [first, *rest], fingerprint


def serve(options: ServeOptions) -> None:
    """Run the stream until it is stopped (blocks)."""
    import ray
    import uvicorn

    from orchestrator.run.cluster import connect, disconnect
    from orchestrator.run.head_key import _key_folder, remove_key_file
    from orchestrator.stream.app import build_app
    from orchestrator.stream.service import StreamService
    from orchestrator.stream.tokens import TokenStore

    _claim(options.state_dir)
    listener = socket.create_server((options.host, options.port))
    # Accepted connections inherit it: without it a kept-alive request waited 40 ms
    # for a delayed ACK (uvicorn sets it on sockets it binds itself, not on ours).
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if options.address is None:
        os.environ.update(EMBEDDED_RAY)
    cluster = connect(options.address)
    key_path = _key_folder() / "key"
    supplies: list[Any] = []
    service: StreamService | None = None
    try:
        supplies, fingerprint = _start_supplies(options, key_path)
        operator = new_token("operator")
        token_file = options.state_dir / TOKEN_FILE
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(operator + "\n")
        tokens = TokenStore(operator)
        del operator
        service = StreamService(
            options.name, options.families, supplies, fingerprint, tokens,
            options.limits, options.episode_options,
        )  # fmt: skip
        config = uvicorn.Config(
            build_app(service),
            log_level="warning",
            ssl_certfile=options.ssl_certfile,
            ssl_keyfile=options.ssl_keyfile,
            timeout_graceful_shutdown=5,
        )
        server = uvicorn.Server(config)
        service.on_stop.append(lambda: setattr(server, "should_exit", True))
        host, port = listener.getsockname()[:2]
        scheme = "https" if options.ssl_certfile else "http"
        state = {
            "name": options.name,
            "url": f"{scheme}://{host}:{port}",
            "pid": os.getpid(),
            "owner": owner_token(),
            "key_fingerprint": fingerprint,
            "token_file": str(token_file),
        }
        write_atomically(options.state_dir / STATE_FILE, json.dumps(state) + "\n")
        print(json.dumps({k: state[k] for k in ("name", "url", "key_fingerprint", "token_file")}),
              flush=True)  # fmt: skip
        server.run(sockets=[listener])
    finally:
        if service is not None:
            service.episodes.stop()
        for supply in supplies:
            with contextlib.suppress(Exception):
                ray.kill(supply, no_restart=True)
        disconnect(cluster)
        remove_key_file(key_path)
        listener.close()
        for name in (STATE_FILE, TOKEN_FILE):
            (options.state_dir / name).unlink(missing_ok=True)
