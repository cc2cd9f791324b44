"""`causal-gym-run stream serve`: one stream's HTTP service on the head, until stopped.

Order, and why:

1. Bind both listeners (listeners.py): the consumer listener (--host, --port) and the
   operator listener (--operator-host, default 127.0.0.1, --operator-port, default any
   free port). Binding comes first, so a host or port that cannot be had leaves no
   state folder or file behind. The soft descriptor limit is raised to the hard one
   and the connection caps kept under half of it.
2. Join Ray (embedded by default, with the head resource; or a cluster's head).
3. Start the supply workers on the head (supply.py): worker 0 makes the key into a
   0600 file in a fresh 0700 folder named after this process, the others read it,
   and it is removed before any request is served. This process never reads it.
4. Make the operator token, write it to a new 0600 file in the stream's state folder
   (0700) and keep only its hash; open the endpoint-secrets folder (secrets.py) and
   the audit log (audit.py, `audit.jsonl`, kept after the stream stops).
5. Serve the API (app.py) with uvicorn on both listeners, and write `stream.json`
   (URL, operator URL, pid, key fingerprint) beside the token for the CLI.
6. On SIGINT, SIGTERM or the operator's stop: stop serving, stop episode production
   and the workers (the key and every truth go with them), remove the state files.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from orchestrator.errors import StreamError
from orchestrator.host.owners import owner_alive, owner_token
from orchestrator.host.private_files import private_folder, write_atomically
from orchestrator.stream.limits import OPERATOR_CONNECTIONS, RateLimitFilter
from orchestrator.stream.options import (
    STATE_FILE,
    TOKEN_FILE,
    ServeOptions,
    default_state_dir,
    exposure,
    read_state,
)
from orchestrator.stream.tokens import new_token

__all__ = ["STATE_FILE", "TOKEN_FILE", "ServeOptions", "default_state_dir", "read_state", "serve"]

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


def _bind_listeners(options: ServeOptions) -> list[Any]:
    """Both listeners (consumer first), or an OSError/StreamError and none."""
    from orchestrator.stream.limits import (
        ConnectionCaps,
        connection_budget,
        raise_descriptor_limit,
    )
    from orchestrator.stream.listeners import ConnectionGuard, bind

    operator_tls, _ = exposure(options)
    descriptors = raise_descriptor_limit()
    total = connection_budget(options.max_connections, descriptors - 2 * OPERATOR_CONNECTIONS)
    per_address = min(options.max_connections_per_address, total)
    guards = [
        ConnectionGuard("consumer", ConnectionCaps(total, per_address), options.header_timeout_s),
        ConnectionGuard(
            "operator",
            ConnectionCaps(OPERATOR_CONNECTIONS, OPERATOR_CONNECTIONS),
            options.header_timeout_s,
        ),
    ]
    listeners: list[Any] = []
    try:
        listeners.append(bind(options.host, options.port, guards[0], options.tls))
        listeners.append(
            bind(options.operator_host, options.operator_port, guards[1], operator_tls)
        )
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    return listeners


def _quiet_logs() -> None:
    """Lines about what clients do (refused or timed-out connections, bad requests,
    accept errors) at most once a second per kind, with a count of the rest: a flood
    of clients must not fill serve.log."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("causal_gym.stream", "asyncio"):
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = [handler], False
        logger.setLevel(logging.WARNING)
    for name in ("causal_gym.stream", "asyncio", "uvicorn.error"):
        logging.getLogger(name).addFilter(RateLimitFilter())


def _leave_nothing(state_dir: Path, made_folder: bool) -> None:
    for name in (STATE_FILE, TOKEN_FILE):
        (state_dir / name).unlink(missing_ok=True)
    if made_folder:
        with contextlib.suppress(OSError):  # not empty: the audit log of a stream that ran
            state_dir.rmdir()


def serve(options: ServeOptions) -> None:
    """Run the stream until it is stopped (blocks)."""
    import ray
    import uvicorn

    from orchestrator.run.cluster import connect, disconnect
    from orchestrator.run.head_key import _key_folder, remove_key_file
    from orchestrator.stream.app import build_app
    from orchestrator.stream.audit import AUDIT_FILE, AuditLog
    from orchestrator.stream.listeners import GuardedProtocol, StreamServer
    from orchestrator.stream.secrets import EndpointSecrets
    from orchestrator.stream.service import StreamService
    from orchestrator.stream.tokens import TokenStore

    listeners = _bind_listeners(options)
    made_folder = not options.state_dir.exists()
    try:
        _claim(options.state_dir)
    except BaseException:
        for listener in listeners:
            listener.close()
        _leave_nothing(options.state_dir, made_folder)
        raise
    _quiet_logs()
    if options.address is None:
        os.environ.update(EMBEDDED_RAY)
    cluster = None
    key_path = _key_folder() / "key"
    supplies: list[Any] = []
    service: StreamService | None = None
    audit: AuditLog | None = None
    secrets: EndpointSecrets | None = None
    try:
        cluster = connect(options.address)
        supplies, fingerprint = _start_supplies(options, key_path)
        secrets = EndpointSecrets(options.endpoint_secrets or options.state_dir, fingerprint)
        operator = new_token("operator")
        token_file = options.state_dir / TOKEN_FILE
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(operator + "\n")
        tokens = TokenStore(operator)
        del operator
        audit = AuditLog(options.state_dir / AUDIT_FILE)
        service = StreamService(
            options.name, options.families, supplies, fingerprint, tokens,
            options.limits, options.episode_options, secrets, audit,
        )  # fmt: skip
        service.connections = listeners[0].guard
        config = uvicorn.Config(
            build_app(service),
            log_level="warning",
            ssl_certfile=options.ssl_certfile,
            ssl_keyfile=options.ssl_keyfile,
            timeout_graceful_shutdown=5,
            loop="asyncio",  # listeners.py: uvloop would accept past GuardedSocket.accept
            # StreamServer makes the protocols itself (each with its guard); named here so
            # that a server built from this config without guards fails loudly
            http=GuardedProtocol,
        )
        server = StreamServer(config, listeners)
        service.on_stop.append(lambda: setattr(server, "should_exit", True))
        state = {
            "name": options.name,
            "url": listeners[0].url,
            "operator_url": listeners[1].url,
            "pid": os.getpid(),
            "owner": owner_token(),
            "key_fingerprint": fingerprint,
            "token_file": str(token_file),
        }
        audit.record("start", **_audited(options, state, listeners))
        write_atomically(options.state_dir / STATE_FILE, json.dumps(state) + "\n")
        shown = ("name", "url", "operator_url", "key_fingerprint", "token_file")
        print(json.dumps({k: state[k] for k in shown}), flush=True)
        server.run()
    finally:
        if service is not None:
            service.episodes.stop()
            if not service.stopping and audit is not None:
                audit.record("stop", client="signal")
        for supply in supplies:
            with contextlib.suppress(Exception):
                ray.kill(supply, no_restart=True)
        if cluster is not None:
            disconnect(cluster)
        remove_key_file(key_path)
        for listener in listeners:
            listener.close()
        if secrets is not None:
            secrets.close()
        if audit is not None:
            audit.record("stopped")
            audit.close()
        _leave_nothing(options.state_dir, made_folder)


def _audited(options: ServeOptions, state: dict[str, Any], listeners: list[Any]) -> dict[str, Any]:
    """The start's audit fields: what was asked for and what was bound (no secret)."""
    guard = listeners[0].guard
    return {
        "stream": options.name,
        "pid": state["pid"],
        "key_fingerprint": state["key_fingerprint"],
        "url": state["url"],
        "operator_url": state["operator_url"],
        "families": list(options.families),
        "workers": options.workers,
        "address": options.address,
        "tls": options.tls,
        "insecure_http": options.insecure_http,
        "endpoint_secrets": str(options.endpoint_secrets or options.state_dir),
        "max_connections": guard.caps.total,
        "max_connections_per_address": guard.caps.per_address,
        "header_timeout_s": options.header_timeout_s,
        "handle_ttl_s": options.limits.handle_ttl_s,
        "max_handles": options.limits.max_outstanding,
        "max_handles_per_consumer": options.limits.per_consumer_outstanding,
        "episode_options": options.episode_options,
    }
