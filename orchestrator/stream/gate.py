"""What a request passes before any route runs (a pure ASGI layer): the listener, the
token, the role and the body size, in that order, each refusal a typed one-line error.

1. The listener: a path this listener does not serve is a 404, the same reply as a
   path no listener serves, whatever the token. The operator listener (loopback by
   default) serves /v1/operator/... and /v1/health; the consumer listener everything
   else. An operator route is not merely forbidden on the consumer listener, it is
   not there, so an exposed consumer port offers an attacker nothing to try.
2. /v1/health and /openapi.json need no token.
3. Exactly one `Authorization: Bearer TOKEN` header (two are a 400: which one counts
   would be the server's guess). A wrong or revoked token is a 401 before the body is
   read, so it costs one hash and a lookup; a token of the other role is a 403. Both
   are written to the audit log (rate-limited per client address).
4. A body over MAX_BODY_BYTES is a 413, by its length or while it is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.routing import Match

from orchestrator.errors import STATUS
from orchestrator.stream.audit import client_of
from orchestrator.stream.types import MAX_BODY_BYTES

if TYPE_CHECKING:
    from orchestrator.stream.service import StreamService

PUBLIC = ("/v1/health", "/openapi.json")
OPERATOR_PREFIX = "/v1/operator/"


def error_reply(code: str, message: str) -> JSONResponse:
    body = {"error": {"code": code, "message": message.splitlines()[0][:500]}}
    return JSONResponse(body, status_code=STATUS[code])


def not_found(method: str, path: str) -> JSONResponse:
    """The reply for a route that is not there (FastAPI's 404, as app.py words it)."""
    return error_reply("not_found", f"{method} {path[:200]}: Not Found (see /openapi.json)")


def serves(listener: str | None, path: str) -> bool:
    """Whether `listener` serves `path` (an untagged request is served health only)."""
    if path == "/v1/health":
        return True
    if listener == "operator":
        return path.startswith(OPERATOR_PREFIX)
    return listener == "consumer" and not path.startswith(OPERATOR_PREFIX)


class _Gone(Exception):
    """The client went away while its body was read."""


class Gate:
    def __init__(self, app: FastAPI, service: StreamService) -> None:
        self.app, self.service = app, service

    def _known(self, scope: dict[str, Any]) -> bool:
        return any(route.matches(scope)[0] is not Match.NONE for route in self.app.routes)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        state = scope.setdefault("state", {})
        if not serves(state.get("listener"), path) or not self._known(scope):
            await not_found(method, path)(scope, receive, send)
            return
        if path in PUBLIC:
            await self.app(scope, receive, send)
            return
        reply = self._check_token(scope, state)
        if reply is None:
            reply = await self._read_into(scope, receive)
        if reply is not None:
            await reply(scope, receive, send)
            return
        body: bytes = state.pop("body")
        await self.app(scope, _replay(body, receive), send)

    def _check_token(self, scope: dict[str, Any], state: dict[str, Any]) -> JSONResponse | None:
        headers = scope.get("headers") or []
        auths = [value for name, value in headers if name == b"authorization"]
        if len(auths) > 1:
            return error_reply("bad_request", "one Authorization header per request, not several")
        auth = auths[0].decode("latin-1") if auths else ""
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        caller = self.service.tokens.caller(token)
        route, client = f"{scope['method']} {scope['path']}", client_of(scope)
        audit = self.service.audit
        if caller is None:
            if audit is not None:
                audit.refused("unauthorized", route, client)
            return error_reply(
                "unauthorized", "a valid token is required: Authorization: Bearer TOKEN"
            )
        role = "operator" if scope["path"].startswith(OPERATOR_PREFIX) else "consumer"
        if caller.role != role:  # before the body is read or validated
            if audit is not None:
                audit.refused("forbidden", route, client, caller.name or "(operator)")
            return error_reply("forbidden", f"this route is for {role} tokens")
        state["caller"] = caller
        return None

    async def _read_into(self, scope: dict[str, Any], receive: Any) -> JSONResponse | None:
        """The body into the scope's state, or the reply that refuses it."""
        length = dict(scope.get("headers") or []).get(b"content-length")
        too_large = error_reply("too_large", f"request bodies are at most {MAX_BODY_BYTES} bytes")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return too_large
        try:
            body = await _read_body(receive)
        except _Gone:
            return error_reply("bad_request", "the request body ended early")
        if body is None:
            return too_large
        scope["state"]["body"] = body
        return None


async def _read_body(receive: Any) -> bytes | None:
    """The whole request body, or None past MAX_BODY_BYTES (a chunked body carries no
    length to refuse it by, so it is read up to the bound first)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """A receive that hands the app the body read already, then the real stream (which
    tells a streaming reply when the client goes away)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    return replayed
