"""The stream's HTTP API (version 1), a FastAPI app served by uvicorn on the head.

Every request passes the gate (gate.py) first: the listener (operator routes live on
the operator listener only), the token and its role, the body size. Every error is a
typed JSON body, `{"error": {"code": ..., "message": ...}}`, whose message is one line
naming what is accepted; none carries a value of a truth or the key (the service has
neither: the supply workers hold them), a token or an endpoint's API key.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from orchestrator.errors import StreamError
from orchestrator.stream.audit import client_of
from orchestrator.stream.episodes import EpisodeSettings
from orchestrator.stream.gate import Gate, error_reply, not_found
from orchestrator.stream.handout import Handout, Pull
from orchestrator.stream.service import StreamService
from orchestrator.stream.tokens import Caller
from orchestrator.stream.types import (
    API_VERSION,
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


class _PullReply(StreamingResponse):
    """A pull's reply: its reservation is given back however the reply ends, even
    when it never started (a client gone before the first byte)."""

    def __init__(self, lines: AsyncIterator[bytes], handout: Handout, pull: Pull) -> None:
        super().__init__(lines, media_type=NDJSON)
        self._handout, self._pull = handout, pull

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._handout.close_pull(self._pull)


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
        return error_reply(exc.code, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return not_found(request.method, request.scope["path"])
        return error_reply(
            "bad_request", f"{request.method} {request.url.path}: {exc.detail} (see /openapi.json)"
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "body"
        message = f"{where}: {first.get('msg', 'invalid')} (see /openapi.json)"
        return error_reply("bad_request", message)

    @app.get("/v1/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "api_version": API_VERSION}

    # --- consumers ------------------------------------------------------------------
    @app.post("/v1/tasks/pull", response_class=StreamingResponse)
    async def pull_tasks(body: PullTasks, request: Request) -> StreamingResponse:
        """Tasks as JSON lines, each sent as soon as it is ready: a TaskWire each, or
        with group > 1 a TaskGroup (the task under `group` handles, each scored once).
        All n x group handles are reserved before the reply starts: a pull that would
        pass a cap is refused whole (429)."""
        caller = _caller(request, "consumer")
        if body.n * body.group > MAX_PULL:
            raise StreamError(
                f"a pull is at most {MAX_PULL} handles: n x group, got {body.n} x {body.group}",
                "bad_request",
            )
        pull = service.handout.open_pull(caller.key, body.n, body.group)
        return _PullReply(_lines(service.handout, pull), service.handout, pull)

    @app.post("/v1/tasks/score")
    async def score(body: Score, request: Request) -> StreamScore:
        caller = _caller(request, "consumer")
        async with service.handout.request(caller.key):
            return await service.handout.score(caller.key, body.handle, body.submission)

    @app.get("/v1/me")
    async def me(request: Request) -> ConsumerCounters:
        return service.handout.consumer_view(_caller(request, "consumer").key)

    @app.post("/v1/episodes/pull")
    async def pull_episodes(body: PullEpisodes, request: Request) -> list[Rollout]:
        caller = _caller(request, "consumer")
        async with service.handout.request(caller.key):
            return await service.episodes.pull(
                caller.key, body.n, body.min_policy_version, body.timeout_s
            )

    @app.post("/v1/episodes/policy-version")
    async def consumer_policy_version(body: PolicyVersion, request: Request) -> dict[str, int]:
        """Gone in 1.5.0 (403): the policy version is the operator's,
        POST /v1/operator/episodes/policy-version."""
        caller = _caller(request, "consumer")
        if service.audit is not None:
            route = "POST /v1/episodes/policy-version"
            service.audit.refused("forbidden", route, client_of(request.scope), caller.name)
        raise StreamError(
            "the policy version is the operator's: POST /v1/operator/episodes/policy-version "
            "with the operator token (StreamOperator.set_policy_version, or "
            "`causal-gym-run stream policy-version`)",
            "forbidden",
        )

    # --- the operator ---------------------------------------------------------------
    @app.get("/v1/operator/status")
    async def status(request: Request) -> StreamStats:
        _caller(request, "operator")
        return service.stats()

    @app.post("/v1/operator/tokens")
    async def mint(body: MintToken, request: Request) -> Minted:
        _caller(request, "operator")
        token = service.mint(body.name, body.max_outstanding, client_of(request.scope))
        return Minted(name=body.name, token=token)

    @app.delete("/v1/operator/tokens/{name}")
    async def revoke(name: str, request: Request) -> dict[str, str]:
        """Revoke a consumer's token: its next request is a 401, its pulls under way end
        (their tasks not handed over go back to the pool) and its handles are forgotten."""
        _caller(request, "operator")
        await service.revoke(name, client_of(request.scope))
        return {"revoked": name}

    @app.post("/v1/operator/export-key")
    async def export_key(body: ExportKey, request: Request) -> Exported:
        _caller(request, "operator")
        fingerprint = await service.export_key(body.path, client_of(request.scope))
        return Exported(key_fingerprint=fingerprint, path=body.path)

    @app.post("/v1/operator/episodes")
    async def configure(body: EpisodeSettings, request: Request) -> dict[str, int]:
        """Episode mode: the model server (its API key as a value, or a file's name in
        the stream's endpoint-secrets folder) and how to sample; returns the bound on
        episodes in flight plus buffered."""
        _caller(request, "operator")
        return {"bound": service.configure_episodes(body, client_of(request.scope))}

    @app.post("/v1/operator/episodes/policy-version")
    async def policy_version(body: PolicyVersion, request: Request) -> dict[str, int]:
        """The version of the policy the endpoint now serves: rollouts begun from now on
        carry it (and pulls with min_policy_version drop older ones)."""
        _caller(request, "operator")
        service.set_policy_version(body.version, client_of(request.scope))
        return {"policy_version": body.version}

    @app.post("/v1/operator/stop")
    async def stop(request: Request) -> dict[str, str]:
        _caller(request, "operator")
        service.request_stop(client_of(request.scope))
        return {"stopping": service.name}

    return Gate(app, service)


async def _lines(handout: Handout, pull: Pull) -> AsyncIterator[bytes]:
    """The pull's JSON lines (a TaskWire each, or with group > 1 a TaskGroup, the same
    bytes wrapped); an error after the first line (the stream stopping, a supply
    worker gone, the consumer revoked) is the last line, an error reply of its own."""
    try:
        async for made in handout.serve(pull):
            if pull.group == 1:
                yield made.line + b"\n"
            else:
                handles = json.dumps(list(made.handles)).encode()
                yield b'{"handles":' + handles + b',"task":' + made.line + b"}\n"
    except StreamError as exc:
        body = {"error": {"code": exc.code, "message": str(exc).splitlines()[0][:500]}}
        yield json.dumps(body).encode() + b"\n"


def openapi_schema() -> dict[str, Any]:
    """The API's OpenAPI document (routes only: no service is needed to describe them);
    docs/stream-openapi-v1.json is this, and a test holds the served one to it."""
    gate: Gate = build_app(cast(StreamService, None))
    schema: dict[str, Any] = gate.app.openapi()
    return schema
