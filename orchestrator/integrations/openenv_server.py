"""The OpenEnv server over a causal-gym stream: OpenEnv's own `create_app` serving
openenv_env.CausalGymEnvironment, behind a gate that wants the consumer's token.

    python -m orchestrator.integrations.openenv_server --url URL --token-file FILE

(`causal-gym-run stream openenv` runs this in the OpenEnv virtualenv.) Episodes are
the WebSocket sessions at `/ws`, one sandbox each, at most `--max-sessions` at once
(more are refused with OpenEnv's CAPACITY_REACHED), closed when the client
disconnects or after `--idle-timeout` seconds without a message (IdleSessionClose:
counted from the server's last reply, so a long tool call is never idle time). OpenEnv's stateless
`POST /reset` builds a throwaway environment per request, which for a stream would
claim a task and drop it, so it answers 409 with the way in instead; `POST /step` is
OpenEnv's own (a malformed action gets its 422; a well-formed one, having no episode,
gets an observation saying where episodes are).

The client sends the token it was given for the stream as `Authorization: Bearer
TOKEN` (OpenEnv's `EnvClient(..., headers=...)`); without it, or with another, a
request gets 401 and a WebSocket is refused before it opens. Only `/health` is open.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import socket
import sys
import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Paths served without the token: a liveness probe.
OPEN_PATHS = frozenset({"/health"})
#: OpenEnv's stateless route that would claim a task and drop it (the module's docstring).
STATELESS_PATHS = frozenset({"/reset"})
TOKEN_HINT = "send the stream consumer token as 'Authorization: Bearer <token>'"


class ConsumerTokenGate:
    """ASGI middleware: every HTTP request and WebSocket but `/health` carries the
    consumer token, compared in constant time."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], token: str):
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse before the app sees anything; pass what carries the token on."""
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            if kind == "websocket":  # closing before accept: the handshake gets 403
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _json(send, 401, {"error": f"unauthorized: {TOKEN_HINT}"})
            return
        if kind == "http" and scope["path"] in STATELESS_PATHS:
            message = (
                "causal-gym episodes are stateful: open a session over the WebSocket at "
                "/ws (openenv EnvClient or GenericEnvClient)"
            )
            await _json(send, 409, {"error": message})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, supplied = bytes(value).partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    supplied.strip(), self._token
                )
        return False


class IdleSessionClose:
    """ASGI middleware: a WebSocket whose client sends nothing for `idle_timeout_s`
    seconds while the server waits for its next message is closed, and OpenEnv then
    ends its session (the sandbox goes with it).

    Why not OpenEnv's own reaper (ConcurrencyConfig.session_timeout): it counts a
    session idle from the end of its last step, so a tool call running longer than the
    timeout had its session destroyed under it. With a 2 s timeout, an expert task's
    reference kit took long enough under load that the episode's next step found no
    session (tests/test_openenv.py failed that way once in CI). Here the clock runs
    only while the server is waiting for the client."""

    def __init__(
        self, app: Callable[[Scope, Receive, Send], Awaitable[None]], idle_timeout_s: float
    ):
        self.app = app
        self._idle_s = idle_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass HTTP through; give a WebSocket's app a receive that times out."""
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        closed = False

        async def tracked_send(message: MutableMapping[str, Any]) -> None:
            nonlocal closed
            closed = closed or message["type"] == "websocket.close"
            await send(message)

        async def receive_or_close() -> MutableMapping[str, Any]:
            nonlocal closed
            if closed:
                return await receive()
            try:
                return await asyncio.wait_for(receive(), self._idle_s)
            except TimeoutError:
                closed = True
                await send({"type": "websocket.close", "code": 1000, "reason": "idle"})
                return {"type": "websocket.disconnect", "code": 1000}

        await self.app(scope, receive_or_close, tracked_send)


async def _json(send: Send, status: int, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def make_app(
    url: str,
    token: str,
    max_sessions: int,
    idle_timeout_s: float,
    sandbox: str = "local",
    max_tool_calls: int | None = None,
) -> Any:
    """OpenEnv's app for sessions on the stream at `url`, gated by `token`."""
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.types import ConcurrencyConfig

    from orchestrator.integrations.openenv_env import (
        DEFAULT_MAX_TOOL_CALLS,
        CausalGymAction,
        CausalGymEnvironment,
        CausalGymObservation,
        CausalGymState,
    )
    from orchestrator.integrations.session import SessionSettings
    from orchestrator.integrations.sources import StreamSource

    settings = SessionSettings(sandbox=sandbox)
    live: weakref.WeakSet[CausalGymEnvironment] = weakref.WeakSet()  # ended sessions drop out

    def environment() -> CausalGymEnvironment:
        env = CausalGymEnvironment(
            lambda: StreamSource(url, token), settings, max_tool_calls or DEFAULT_MAX_TOOL_CALLS
        )
        live.add(env)
        return env

    app = create_app(
        environment,
        CausalGymAction,
        CausalGymObservation,
        env_name="causal_gym",
        # no session_timeout: IdleSessionClose closes a quiet WebSocket instead
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
        state_cls=CausalGymState,
    )

    async def close_every_session() -> None:  # a sandbox outlives no server
        for env in list(live):
            await asyncio.to_thread(env.close)

    app.router.on_shutdown.append(close_every_session)
    app.add_middleware(IdleSessionClose, idle_timeout_s=idle_timeout_s)
    app.add_middleware(ConsumerTokenGate, token=token)
    return app


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM or SIGINT (the options are checked by the CLI that runs this)."""
    parser = argparse.ArgumentParser(prog="causal-gym-run stream openenv")
    parser.add_argument("--url", required=True, help="the stream's URL")
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument("--max-sessions", type=int, default=4)
    parser.add_argument("--idle-timeout", type=float, default=600.0)
    parser.add_argument("--max-tool-calls", type=int, default=None)
    parser.add_argument("--sandbox", default="local")
    args = parser.parse_args(argv)
    token = args.token_file.read_text().strip()
    import uvicorn

    app = make_app(
        args.url, token, args.max_sessions, args.idle_timeout, args.sandbox, args.max_tool_calls
    )
    listener = socket.create_server((args.host, args.port))
    host, port = listener.getsockname()[:2]
    ready = {"url": f"http://{host}:{port}", "ws": f"ws://{host}:{port}/ws",
             "max_sessions": args.max_sessions, "idle_timeout_s": args.idle_timeout}  # fmt: skip
    print(json.dumps(ready), flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="websockets-sansio"))
    server.run(sockets=[listener])
    sys.exit(0)


if __name__ == "__main__":
    main()
