"""The stream's HTTP API (version 1), a FastAPI app served by uvicorn on the head.

Every request but /v1/health carries `Authorization: Bearer <token>`. A pure ASGI
layer in front of the routes checks the token and the body size before anything else
runs: a wrong or revoked token gets 401 before the body is read, so it costs nothing;
a body over MAX_BODY_BYTES gets 413. Operator routes (/v1/operator/...) refuse
consumer tokens with 403, and consumer routes refuse the operator's (an operator who
wants to consume mints a token like anyone else). Every error is a typed JSON body,
`{"error": {"code": ..., "message": ...}}`, whose message is one line naming what is
accepted; none carries a value of a truth or the key (the service has neither: the
supply workers hold them).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from orchestrator.errors import STATUS, StreamError
from orchestrator.stream.episodes import EpisodeSettings
from orchestrator.stream.service import StreamService
from orchestrator.stream.tokens import Caller
from orchestrator.stream.types import (
    API_VERSION,
    MAX_BODY_BYTES,
    MAX_PULL,
    ConsumerCounters,
    ErrorReply,
    Exported,
    ExportKey,
    Minted,
    MintToken,
    PolicyVersion,
    PullEpisodes,
    PullTasks,
    Rollout,
    Score,
    StreamScore,
    StreamStats,
)

NDJSON = "application/x-ndjson"


def _error(code: str, message: str) -> JSONResponse:
    body = {"error": {"code": code, "message": message.splitlines()[0][:500]}}
    return JSONResponse(body, status_code=STATUS[code])


class Gate:
    """Token and body-size checks before the app sees a request (pure ASGI)."""

    def __init__(self, app: FastAPI, service: StreamService) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in ("/v1/health", "/openapi.json"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        caller = self.service.tokens.caller(token)
        if caller is None:
            reply = _error("unauthorized", "a valid token is required: Authorization: Bearer TOKEN")
            await reply(scope, receive, send)
            return
        role = "operator" if scope["path"].startswith("/v1/operator/") else "consumer"
        if caller.role != role:  # before the body is read or validated
            reply = _error("forbidden", f"this route is for {role} tokens")
            await reply(scope, receive, send)
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            await _too_large(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            await _too_large(scope, receive, send)
            return
        scope.setdefault("state", {})["caller"] = caller
        await self.app(scope, _replay(body, receive), send)


async def _too_large(scope: dict[str, Any], receive: Any, send: Any) -> None:
    reply = _error("too_large", f"request bodies are at most {MAX_BODY_BYTES} bytes")
    await reply(scope, receive, send)


async def _read_body(receive: Any) -> bytes | None:
    """The whole request body, or None past MAX_BODY_BYTES (a chunked body carries no
    length to refuse it by, so it is read up to the bound first)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
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


def _caller(request: Request, role: str) -> Caller:
    """The caller the gate let in (it checked the role by the route's prefix)."""
    caller: Caller = request.scope["state"]["caller"]
    assert caller.role == role
    return caller


def build_app(service: StreamService) -> Gate:
    app = FastAPI(
        title="causal-gym stream",
        docs_url=None,  # no pages that load scripts from a CDN; the schema is /openapi.json
        redoc_url=None,
        version=API_VERSION,
        description="Fresh-key causal-inference tasks and their rewards for RL trainers.",
        responses={code: {"model": ErrorReply} for code in (400, 401, 403, 404, 409, 413, 429)},
    )

    @app.exception_handler(StreamError)
    async def _stream_error(request: Request, exc: StreamError) -> JSONResponse:
        return _error(exc.code, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "bad_request"}.get(exc.status_code, "bad_request")
        return _error(
            code, f"{request.method} {request.url.path}: {exc.detail} (see /openapi.json)"
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "body"
        return _error("bad_request", f"{where}: {first.get('msg', 'invalid')} (see /openapi.json)")

    @app.get("/v1/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "api_version": API_VERSION}

    # --- consumers ------------------------------------------------------------------
    @app.post("/v1/tasks/pull", response_class=StreamingResponse)
    async def pull_tasks(body: PullTasks, request: Request) -> StreamingResponse:
        """Tasks as JSON lines, each sent as soon as it is ready: a TaskWire each, or
        with group > 1 a TaskGroup (the task under `group` handles, each scored once)."""
        caller = _caller(request, "consumer")
        if body.n * body.group > MAX_PULL:
            raise StreamError(
                f"a pull is at most {MAX_PULL} handles: n x group, got {body.n} x {body.group}",
                "bad_request",
            )
        service.handout.check_room(caller.name, body.n * body.group)
        service.handout.enter(caller.name)  # left when the last line is sent
        lines = _lines(service, caller.name, body.n, body.group)
        return StreamingResponse(lines, media_type=NDJSON)

    @app.post("/v1/tasks/score")
    async def score(body: Score, request: Request) -> StreamScore:
        caller = _caller(request, "consumer")
        async with service.handout.request(caller.name):
            return await service.handout.score(caller.name, body.handle, body.submission)

    @app.get("/v1/me")
    async def me(request: Request) -> ConsumerCounters:
        return service.handout.consumer_view(_caller(request, "consumer").name)

    @app.post("/v1/episodes/pull")
    async def pull_episodes(body: PullEpisodes, request: Request) -> list[Rollout]:
        caller = _caller(request, "consumer")
        async with service.handout.request(caller.name):
            return await service.episodes.pull(
                caller.name, body.n, body.min_policy_version, body.timeout_s
            )

    @app.post("/v1/episodes/policy-version")
    async def policy_version(body: PolicyVersion, request: Request) -> dict[str, int]:
        _caller(request, "consumer")
        service.episodes.set_policy_version(body.version)
        return {"policy_version": body.version}

    # --- the operator ---------------------------------------------------------------
    @app.get("/v1/operator/status")
    async def status(request: Request) -> StreamStats:
        _caller(request, "operator")
        return service.stats()

    @app.post("/v1/operator/tokens")
    async def mint(body: MintToken, request: Request) -> Minted:
        _caller(request, "operator")
        return Minted(name=body.name, token=service.tokens.mint(body.name))

    @app.delete("/v1/operator/tokens/{name}")
    async def revoke(name: str, request: Request) -> dict[str, str]:
        _caller(request, "operator")
        if not service.tokens.revoke(name):
            raise StreamError(f"no consumer named {name[:64]!r}", "not_found")
        return {"revoked": name}

    @app.post("/v1/operator/export-key")
    async def export_key(body: ExportKey, request: Request) -> Exported:
        _caller(request, "operator")
        return Exported(key_fingerprint=await service.export_key(body.path), path=body.path)

    @app.post("/v1/operator/episodes")
    async def configure(body: EpisodeSettings, request: Request) -> dict[str, int]:
        """Episode mode: the model server (its API key as a value or a file on the head)
        and how to sample; returns the bound on episodes in flight plus buffered."""
        _caller(request, "operator")
        return {"bound": service.episodes.configure(body)}

    @app.post("/v1/operator/stop")
    async def stop(request: Request) -> dict[str, str]:
        _caller(request, "operator")
        service.request_stop()
        return {"stopping": service.name}

    return Gate(app, service)


async def _lines(
    service: StreamService, consumer: str, n: int, group: int = 1
) -> AsyncIterator[bytes]:
    """The pull's JSON lines (a TaskWire each, or with group > 1 a TaskGroup, the same
    bytes wrapped); an error after the first line (the stream stopping, a supply
    worker gone) is the last line, an error reply of its own."""
    try:
        async for made in service.handout.pull(consumer, n, group):
            if group == 1:
                yield made.line + b"\n"
            else:
                handles = json.dumps(list(made.handles)).encode()
                yield b'{"handles":' + handles + b',"task":' + made.line + b"}\n"
    except StreamError as exc:
        body = {"error": {"code": exc.code, "message": str(exc).splitlines()[0][:500]}}
        yield json.dumps(body).encode() + b"\n"
    finally:
        service.handout.leave(consumer)


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI document (routes only: no service is needed to describe them);
    docs/stream-openapi-v1.json is this, and a test holds the served one to it."""
    gate: Gate = build_app(cast(StreamService, None))
    schema: dict[str, Any] = gate.app.openapi()
    return schema
