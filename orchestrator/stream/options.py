"""What `stream serve` is asked for, where a stream keeps its state, and which of its
listeners may speak plain HTTP.

A listener off loopback that speaks plain HTTP sends every bearer token across the
network in clear, so it is refused unless --insecure-http says it is meant (and then
warned about); the operator listener speaks TLS only off loopback (on loopback its
token never leaves the machine). Names are resolved here, so a host that does not
resolve is one line before anything is bound or written.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import StreamError
from orchestrator.stream.ledger import Limits
from orchestrator.stream.limits import (
    HEADER_TIMEOUT_S,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_ADDRESS,
)

STATE_FILE, TOKEN_FILE = "stream.json", "operator.token"


def default_state_dir(name: str) -> Path:
    return Path.home() / ".causal-gym" / "streams" / name


@dataclass(frozen=True)
class ServeOptions:
    name: str
    families: tuple[str, ...]
    state_dir: Path
    host: str = "127.0.0.1"
    port: int = 0
    operator_host: str = "127.0.0.1"
    operator_port: int = 0
    workers: int = 1
    address: str | None = None
    limits: Limits = field(default_factory=Limits)
    episode_options: dict[str, Any] = field(default_factory=dict)
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    #: Serve plain HTTP on a host other than loopback (refused without it).
    insecure_http: bool = False
    #: Where episode mode's `api_key_file` names live (None: the state folder).
    endpoint_secrets: Path | None = None
    max_connections: int = MAX_CONNECTIONS
    max_connections_per_address: int = MAX_CONNECTIONS_PER_ADDRESS
    header_timeout_s: float = HEADER_TIMEOUT_S

    @property
    def tls(self) -> bool:
        return self.ssl_certfile is not None


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one (a name is resolved; one
    that does not resolve is a one-line StreamError)."""
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback
    if not host.strip() or host == "*":
        return False
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise StreamError(f"cannot resolve host {host[:100]!r}: {why}") from None
    return all(ipaddress.ip_address(str(i[4][0]).split("%")[0]).is_loopback for i in infos)


def exposure(options: ServeOptions) -> tuple[bool, list[str]]:
    """Whether the operator listener speaks TLS, and the warnings to print; a
    one-line StreamError for a listener off loopback that would speak plain HTTP
    (tokens in clear across a network) without --insecure-http."""
    warnings: list[str] = []
    operator_tls = False
    for flag, host, tls in (
        ("--host", options.host, options.tls),
        ("--operator-host", options.operator_host, options.tls),
    ):
        if is_loopback(host):
            continue
        operator_tls = operator_tls or (flag == "--operator-host" and tls)
        if tls:
            continue
        if not options.insecure_http:
            raise StreamError(
                f"{flag} {host} is not loopback: serve TLS (--ssl-certfile and "
                "--ssl-keyfile), or bind 127.0.0.1 behind a TLS proxy, or give "
                "--insecure-http to send tokens in clear anyway"
            )
        warnings.append(
            f"warning: {flag} {host} serves plain HTTP (--insecure-http): tokens cross "
            "the network in clear"
        )
    return operator_tls, warnings


def read_state(state_dir: Path) -> dict[str, Any]:
    """The running stream's stream.json (URL, pid, fingerprint), or a StreamError."""
    try:
        state: dict[str, Any] = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise StreamError(f"no stream runs with state in {state_dir}", "not_found") from exc
    return state
