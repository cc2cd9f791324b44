"""The stream's sockets: a consumer listener and an operator listener, served by one
uvicorn server, every connection counted and timed from its accept.

Why not uvicorn's own binding: it has no header timeout (a connection that never
finishes its request stays open for good; 19,995 of them used up the descriptors and
/v1/health stopped answering), no cap on connections, and one TLS setting for every
socket. Here:

- `GuardedSocket.accept` admits a connection only under its listener's caps (open
  connections in all and per client address); a refused one is closed at once, before
  asyncio or TLS spend anything on it, and logged at most once a second with a count.
- An admitted connection must deliver a whole request (TLS handshake, headers and
  body) within the header timeout of its accept or of its previous response, or it is
  shut down. The HTTP protocol (uvicorn's h11 one, `GuardedProtocol`) says when it is
  waiting for a request.
- Each listener tags its requests (`scope["state"]["listener"]`), so the gate answers
  an operator route on the consumer listener as if it did not exist. The tag comes
  from the socket that accepted the connection, not from addresses (two listeners may
  share a port on different hosts).
- TLS per listener: the consumer listener when a certificate is given; the operator
  listener only when it is not on loopback (there the token never leaves the machine,
  and the CLI on the head need not verify a certificate issued for a public name).

The event loop is asyncio's own (uvloop accepts in C, past `accept`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
from dataclasses import dataclass
from typing import Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from orchestrator.errors import StreamError
from orchestrator.stream.limits import ConnectionCaps

Role = Literal["consumer", "operator"]
log = logging.getLogger("causal_gym.stream")
#: Connections refused in one call of accept before the loop gets a turn.
MAX_REFUSALS_PER_ACCEPT = 64


@dataclass
class _Open:
    address: str
    sock: socket.socket
    timer: asyncio.TimerHandle | None = None


class ConnectionGuard:
    """One listener's caps, and every admitted connection's deadline for a request."""

    def __init__(self, role: Role, caps: ConnectionCaps, header_timeout_s: float) -> None:
        self.role, self.caps, self.header_timeout_s = role, caps, header_timeout_s
        self._open: dict[int, _Open] = {}
        self.timed_out = 0

    def admit(self, address: str) -> bool:
        reason = self.caps.admit(address)
        if reason is None:
            return True
        log.warning("refused a connection to the %s listener: %s", self.role, reason)
        return False

    def accepted(self, sock: socket.socket, address: str) -> None:
        fd = sock.fileno()
        self._open[fd] = _Open(address, sock)
        self._arm(fd)

    def waiting(self, fd: int, waiting: bool) -> None:
        """Whether connection `fd` waits for (the rest of) a request: a deadline runs
        from the first moment it does until the request is whole."""
        entry = self._open.get(fd)
        if entry is None:
            return
        if waiting and entry.timer is None:
            self._arm(fd)
        elif not waiting and entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None

    def _arm(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        self._open[fd].timer = loop.call_later(self.header_timeout_s, self._expire, fd)

    def _expire(self, fd: int) -> None:
        entry = self._open.get(fd)
        if entry is None:
            return
        entry.timer = None
        self.timed_out += 1
        log.warning(
            "closed a connection to the %s listener: no whole request within %g s",
            self.role, self.header_timeout_s,
        )  # fmt: skip
        # The transport sees the end of its stream and closes (and so releases) it;
        # closing the descriptor under it would let the number be reused while in use.
        with contextlib.suppress(OSError):
            entry.sock.shutdown(socket.SHUT_RDWR)

    def closed(self, fd: int) -> None:
        entry = self._open.pop(fd, None)
        if entry is None:
            return
        if entry.timer is not None:
            entry.timer.cancel()
        self.caps.release(entry.address)


class _Conn(socket.socket):
    """An admitted connection: closing it gives its place back."""

    guard: ConnectionGuard | None = None

    def close(self) -> None:
        guard, self.guard = self.guard, None
        if guard is not None and self.fileno() >= 0:
            guard.closed(self.fileno())
        super().close()


class GuardedSocket(socket.socket):
    """A listening socket whose accept admits connections under its guard's caps."""

    guard: ConnectionGuard

    def accept(self) -> tuple[socket.socket, Any]:
        for _ in range(MAX_REFUSALS_PER_ACCEPT):
            fd, addr = self._accept()  # type: ignore[attr-defined]  # BlockingIOError: none
            address = str(addr[0]) if isinstance(addr, tuple) else "local"
            if self.guard.admit(address):
                conn = _Conn(self.family, self.type, self.proto, fileno=fd)
                conn.guard = self.guard
                self.guard.accepted(conn, address)
                return conn, addr
            os.close(fd)
        raise BlockingIOError  # asyncio accepts the rest on the loop's next turn


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol, telling its guard when it waits for a request."""

    def __init__(self, *, guard: ConnectionGuard, **options: Any) -> None:
        super().__init__(**options)
        self._guard, self._fd = guard, -1

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None else -1
        self._report()

    def handle_events(self) -> None:
        super().handle_events()
        self._report()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._report()

    def _report(self) -> None:
        waiting = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
        self._guard.waiting(self._fd, waiting and not self.transport.is_closing())


@dataclass
class Listener:
    role: Role
    sock: GuardedSocket
    guard: ConnectionGuard
    tls: bool

    @property
    def url(self) -> str:
        """The URL this machine reaches the listener at (a wildcard as loopback)."""
        host, port = self.sock.getsockname()[:2]
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{port}"

    def close(self) -> None:
        self.sock.close()


def bind(host: str, port: int, guard: ConnectionGuard, tls: bool) -> Listener:
    """A listening socket on host:port for `guard`'s role (OSError when it cannot be)."""
    infos = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )  # fmt: skip
    family, address = infos[0][0], infos[0][4]
    plain = socket.create_server(address[:2], family=family)
    # Accepted connections inherit it: without it a kept-alive request waited 40 ms for
    # a delayed ACK.
    plain.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock = GuardedSocket(plain.family, plain.type, plain.proto, fileno=plain.detach())
    sock.guard = guard
    return Listener(guard.role, sock, guard, tls)


class StreamServer(uvicorn.Server):
    """uvicorn's server over our listeners: each with its own protocol factory (its
    tag and guard) and its own TLS setting."""

    def __init__(self, config: uvicorn.Config, listeners: list[Listener]) -> None:
        super().__init__(config)
        self.listeners = listeners

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            raise StreamError("the service's app did not start", "unavailable")
        loop = asyncio.get_running_loop()
        self.servers = []
        for listener in self.listeners:
            factory = functools.partial(
                GuardedProtocol,
                guard=listener.guard,
                config=self.config,
                server_state=self.server_state,
                app_state={**self.lifespan.state, "listener": listener.role},
            )
            ssl = self.config.ssl if listener.tls else None
            server = await loop.create_server(
                factory, sock=listener.sock, ssl=ssl, backlog=self.config.backlog
            )  # fmt: skip
            self.servers.append(server)
        self.started = True
