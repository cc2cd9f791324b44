"""`causal-gym-run stream serve NAME`: a stream in the foreground (what `stream start`
runs in the background and a service manager runs directly).

Every option is checked before anything is bound or written, each bad one one line and
exit 2: the families, the sandbox, the TLS pair (loaded, so a wrong file is named now
rather than after Ray started), the endpoint-secrets folder, the caps, and whether a
listener off loopback would speak plain HTTP (refused unless --insecure-http).
"""

from __future__ import annotations

import math
import os
import ssl
from pathlib import Path
from typing import Annotated, Any

import typer

from orchestrator.cli.common import fail
from orchestrator.cli.stream import (
    _FAMILIES_HELP,
    NameArgument,
    StateOption,
    _state_dir,
    stream_app,
)
from orchestrator.stream.limits import (
    HEADER_TIMEOUT_S,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS,
    MAX_HANDLES,
    MAX_HANDLES_PER_CONSUMER,
)


def _families(families: str | None) -> tuple[str, ...]:
    from causal_gym.task_id import FAMILIES
    from orchestrator.stream import default_families

    listed = families if families is not None else ",".join(default_families())
    chosen = tuple(f.strip() for f in listed.split(",") if f.strip())
    unknown = [f for f in chosen if f not in FAMILIES]
    if unknown or not chosen:
        fail(f"unknown families {unknown}: accepted families are {', '.join(FAMILIES)}")
    return chosen


def _check_tls(certfile: str | None, keyfile: str | None) -> None:
    if (certfile is None) != (keyfile is None):
        fail("TLS needs both --ssl-certfile and --ssl-keyfile")
    if certfile is not None and keyfile is not None:
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(certfile, keyfile)
        except (OSError, ssl.SSLError) as exc:
            why = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
            fail(f"cannot load the TLS certificate {certfile} and key {keyfile}: {why}")


def _serve_options(**given: Any) -> Any:
    from orchestrator.errors import StreamError
    from orchestrator.sandbox.registry import backend
    from orchestrator.stream.ledger import Limits
    from orchestrator.stream.options import ServeOptions, exposure
    from orchestrator.stream.secrets import check_secrets_folder

    families = _families(given["families"])
    try:
        backend(given["sandbox"])
    except ValueError as exc:
        fail(str(exc))
    _check_tls(given["certfile"], given["keyfile"])
    if given["max_handles_per_consumer"] > given["max_handles"]:
        fail(
            f"--max-handles-per-consumer {given['max_handles_per_consumer']} is above "
            f"--max-handles {given['max_handles']}: a consumer's cap is within the stream's"
        )
    timeout = given["header_timeout"]
    if not math.isfinite(timeout) or not 0 < timeout <= 3600:
        fail(f"--header-timeout is a number of seconds in (0, 3600], got {timeout:g}")
    secrets: Path | None = given["endpoint_secrets"]
    options = ServeOptions(
        name=given["name"],
        families=families,
        state_dir=_state_dir(given["name"], given["state_dir"]),
        host=given["host"],
        port=given["port"],
        operator_host=given["operator_host"],
        operator_port=given["operator_port"],
        workers=given["workers"] or os.cpu_count() or 1,
        address=given["address"],
        limits=Limits(
            handle_ttl_s=given["handle_ttl"],
            max_outstanding=given["max_handles"],
            per_consumer_outstanding=given["max_handles_per_consumer"],
        ),
        episode_options={
            "sandbox": given["sandbox"],
            "concurrency": given["concurrency"],
            "episodes_per_actor": given["episodes_per_actor"],
        },
        ssl_certfile=given["certfile"],
        ssl_keyfile=given["keyfile"],
        insecure_http=given["insecure_http"],
        endpoint_secrets=secrets.absolute() if secrets is not None else None,
        max_connections=given["max_connections"],
        max_connections_per_address=given["max_connections_per_address"],
        header_timeout_s=timeout,
    )
    try:
        if secrets is not None:
            check_secrets_folder(secrets)
        _, warnings = exposure(options)
    except StreamError as exc:
        fail(str(exc))
    for warning in warnings:
        typer.echo(warning, err=True)
    return options


@stream_app.command("serve")
def serve_command(
    name: NameArgument,
    families: Annotated[str | None, typer.Option("--families", help=_FAMILIES_HELP)] = None,
    state_dir: StateOption = None,
    host: Annotated[
        str, typer.Option("--host", help="The consumer listener's address.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free.")] = 8600,
    operator_host: Annotated[
        str, typer.Option("--operator-host", help="The operator listener's address.")
    ] = "127.0.0.1",
    operator_port: Annotated[
        int, typer.Option("--operator-port", min=0, max=65535, help="0: any free.")
    ] = 0,
    insecure_http: Annotated[
        bool,
        typer.Option("--insecure-http", help="Serve plain HTTP off loopback (tokens in clear)."),
    ] = False,
    certfile: Annotated[str | None, typer.Option("--ssl-certfile")] = None,
    keyfile: Annotated[str | None, typer.Option("--ssl-keyfile")] = None,
    endpoint_secrets: Annotated[
        Path | None,
        typer.Option(
            "--endpoint-secrets",
            help="Folder of episode mode's api_key_file names (default: the state folder).",
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, max=64, help="Generator processes (cores).")
    ] = None,
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster (default: embedded).")
    ] = None,
    handle_ttl: Annotated[
        float, typer.Option("--handle-ttl", min=1.0, help="Seconds a handle lives.")
    ] = 3600.0,
    max_handles: Annotated[
        int, typer.Option("--max-handles", min=1, help="Unscored handles, all consumers.")
    ] = MAX_HANDLES,
    max_handles_per_consumer: Annotated[
        int, typer.Option("--max-handles-per-consumer", min=1, help="Unscored, per consumer.")
    ] = MAX_HANDLES_PER_CONSUMER,
    max_connections: Annotated[
        int, typer.Option("--max-connections", min=1, help="Open on the consumer listener.")
    ] = MAX_CONNECTIONS,
    max_connections_per_address: Annotated[
        int,
        typer.Option("--max-connections-per-address", min=1, help="Open from one address."),
    ] = MAX_CONNECTIONS_PER_ADDRESS,
    header_timeout: Annotated[
        float,
        typer.Option("--header-timeout", help="Seconds for a whole request, from the accept."),
    ] = HEADER_TIMEOUT_S,
    sandbox: Annotated[str, typer.Option("--sandbox", help="Episode mode's sandbox.")] = "local",
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Episodes in flight.")
    ] = 8,
    episodes_per_actor: Annotated[int, typer.Option("--episodes-per-actor", min=1)] = 8,
) -> None:
    """Serve a stream over HTTP in the foreground until stopped (SIGINT, SIGTERM or
    `stream stop`); it makes its own key, which never leaves its supply workers."""
    options = _serve_options(**locals())
    from orchestrator.errors import OrchestratorError
    from orchestrator.stream.server import serve

    try:
        serve(options)
    except OSError as exc:
        fail(f"cannot serve on {host}:{port} / {operator_host}:{operator_port}: "
             f"{exc.strerror or exc}")  # fmt: skip
    except OrchestratorError as exc:
        fail(str(exc), code=2 if getattr(exc, "code", "") in ("conflict", "bad_request") else 1)
