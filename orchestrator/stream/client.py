"""A trainer's client for a stream's HTTP API: httpx and pydantic, nothing heavier.

    from orchestrator.stream.client import StreamClient
    with StreamClient("http://head:8600", token) as client:
        tasks = client.pull_tasks(8)                     # task mode
        scores = [client.score(t.handle, my_answer(t)) for t in tasks]
        batch = client.pull_episodes(8, min_policy_version=3, timeout_s=60)

`AsyncStreamClient` has the same methods as coroutines, for trainers with an event
loop; `iter_tasks` yields tasks as the service sends them (a pull of many is served
as they are ready). `StreamOperator` is the operator's side (status, consumer tokens,
the key export, episode mode and its policy version, stop), on the stream's operator
URL (stream.json's `operator_url`: a listener of its own, on loopback unless the
operator said otherwise). Every error the service answers comes back as a StreamError
with its code and one-line message; a service that cannot be reached within
`connect_timeout_s` (CONNECT_TIMEOUT_S unless given) is a StreamError too, never a
hang.

This module imports httpx, pydantic and the public wire types only (a test imports it
in a virtualenv without Ray or numpy): install it anywhere with the `client` extra.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
from pydantic import BaseModel

from causal_gym.wire import TaskWire
from orchestrator.errors import StreamError
from orchestrator.stream.types import (
    ConsumerCounters,
    Exported,
    Minted,
    Rollout,
    StreamScore,
    StreamStats,
    TaskGroup,
)

DEFAULT_TIMEOUT_S = 120.0
#: Seconds to wait for a connection (docs/pages/streams.md quotes it; a test holds them
#: to each other).
CONNECT_TIMEOUT_S = 10.0


def _timeout(timeout_s: float, connect_timeout_s: float) -> httpx.Timeout:
    return httpx.Timeout(timeout_s, connect=connect_timeout_s)


def _raise_for(reply: httpx.Response) -> None:
    if reply.status_code < 400:
        return
    try:
        error = reply.json()["error"]
        message, code = str(error["message"]), str(error["code"])
    except (ValueError, KeyError, TypeError):
        raise StreamError(f"the stream answered HTTP {reply.status_code}", "unavailable") from None
    raise StreamError(message, code)


def _unreachable(url: str, exc: httpx.HTTPError) -> StreamError:
    return StreamError(f"cannot reach the stream at {url}: {type(exc).__name__}", "unavailable")


def _line(line: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(line)
    if "error" in data:  # the service stopped mid-pull
        raise StreamError(str(data["error"]["message"]), str(data["error"]["code"]))
    return data


def _task_line(line: str) -> TaskWire:
    return TaskWire.model_validate(_line(line))


def _group_line(line: str) -> TaskGroup:
    return TaskGroup.model_validate(_line(line))


class _Base:
    def __init__(
        self,
        url: str,
        token: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        verify: bool | str = True,
    ) -> None:
        self.url = url.rstrip("/")
        self._options: dict[str, Any] = {
            "base_url": self.url,
            "headers": {"Authorization": f"Bearer {token}"},
            "timeout": _timeout(timeout_s, connect_timeout_s),
            "verify": verify,
        }


class StreamClient(_Base):
    """A consumer of one stream (blocking)."""

    def __init__(self, url: str, token: str, **options: Any) -> None:
        super().__init__(url, token, **options)
        self._http = httpx.Client(**self._options)

    def _post(self, path: str, body: dict[str, Any] | None = None, method: str = "POST") -> Any:
        try:
            reply = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        _raise_for(reply)
        return reply.json()

    def _pull_lines(self, body: dict[str, Any]) -> Iterator[str]:
        try:
            with self._http.stream("POST", "/v1/tasks/pull", json=body) as reply:
                if reply.status_code >= 400:
                    reply.read()
                    _raise_for(reply)
                for line in reply.iter_lines():
                    if line.strip():
                        yield line
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc

    def iter_tasks(self, n: int) -> Iterator[TaskWire]:
        """Tasks one by one, each as soon as the service sends it."""
        for line in self._pull_lines({"n": n}):
            yield _task_line(line)

    def pull_tasks(self, n: int) -> list[TaskWire]:
        """`n` tasks, each under a single-use handle, once all have come; a pull whose
        handles would pass a cap is refused whole (too_many)."""
        return list(self.iter_tasks(n))

    def iter_groups(self, n: int, group: int) -> Iterator[TaskGroup]:
        """`n` tasks, each under `group` handles (GRPO: one answer per handle)."""
        for line in self._pull_lines({"n": n, "group": group}):
            yield _group_line(line)

    def pull_groups(self, n: int, group: int) -> list[TaskGroup]:
        """`n` tasks, each under `group` handles, once all have come."""
        return list(self.iter_groups(n, group))

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        """The score of `submission` (a dict, or the agent's raw JSON text) under
        `handle`, once: an invalid answer scores -1 with its errors; a handle already
        scored, expired or not this consumer's is a StreamError (not_found)."""
        body = {"handle": handle, "submission": submission}
        return StreamScore.model_validate(self._post("/v1/tasks/score", body))

    def pull_episodes(
        self, n: int, min_policy_version: int = 0, timeout_s: float = 0.0
    ) -> list[Rollout]:
        """Up to `n` scored rollouts of episode mode, none older than
        `min_policy_version`, waiting at most `timeout_s` for one; a StreamError when
        the operator has not configured episode mode."""
        body = {"n": n, "min_policy_version": min_policy_version, "timeout_s": timeout_s}
        return [Rollout.model_validate(r) for r in self._post("/v1/episodes/pull", body)]

    def me(self) -> ConsumerCounters:
        """This consumer's own counters and limits."""
        return ConsumerCounters.model_validate(self._post("/v1/me", method="GET"))

    def close(self) -> None:
        """Close the connection; handles not yet scored stay this consumer's until they
        expire."""
        self._http.close()

    def __enter__(self) -> StreamClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncStreamClient(_Base):
    """A consumer of one stream, for an event loop."""

    def __init__(self, url: str, token: str, **options: Any) -> None:
        super().__init__(url, token, **options)
        self._http = httpx.AsyncClient(**self._options)

    async def _post(
        self, path: str, body: dict[str, Any] | None = None, method: str = "POST"
    ) -> Any:
        try:
            reply = await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc
        _raise_for(reply)
        return reply.json()

    async def _pull_lines(self, body: dict[str, Any]) -> AsyncIterator[str]:
        try:
            async with self._http.stream("POST", "/v1/tasks/pull", json=body) as reply:
                if reply.status_code >= 400:
                    await reply.aread()
                    _raise_for(reply)
                async for line in reply.aiter_lines():
                    if line.strip():
                        yield line
        except httpx.HTTPError as exc:
            raise _unreachable(self.url, exc) from exc

    async def iter_tasks(self, n: int) -> AsyncIterator[TaskWire]:
        """Tasks one by one, each as soon as the service sends it."""
        async for line in self._pull_lines({"n": n}):
            yield _task_line(line)

    async def pull_tasks(self, n: int) -> list[TaskWire]:
        """`n` tasks once all have come (as StreamClient.pull_tasks)."""
        return [task async for task in self.iter_tasks(n)]

    async def iter_groups(self, n: int, group: int) -> AsyncIterator[TaskGroup]:
        """`n` tasks under `group` handles each, every one as soon as the service sends it."""
        async for line in self._pull_lines({"n": n, "group": group}):
            yield _group_line(line)

    async def pull_groups(self, n: int, group: int) -> list[TaskGroup]:
        """`n` tasks, each under `group` handles, once all have come."""
        return [g async for g in self.iter_groups(n, group)]

    async def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        """The score of `submission` under `handle`, once (as StreamClient.score)."""
        body = {"handle": handle, "submission": submission}
        return StreamScore.model_validate(await self._post("/v1/tasks/score", body))

    async def pull_episodes(
        self, n: int, min_policy_version: int = 0, timeout_s: float = 0.0
    ) -> list[Rollout]:
        """Up to `n` scored rollouts, as StreamClient.pull_episodes, with the event loop
        free while it waits."""
        body = {"n": n, "min_policy_version": min_policy_version, "timeout_s": timeout_s}
        return [Rollout.model_validate(r) for r in await self._post("/v1/episodes/pull", body)]

    async def me(self) -> ConsumerCounters:
        """This consumer's own counters and limits."""
        return ConsumerCounters.model_validate(await self._post("/v1/me", method="GET"))

    async def aclose(self) -> None:
        """Close the connection; handles not yet scored stay this consumer's until they
        expire."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncStreamClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class StreamOperator(StreamClient):
    """The operator's side of a stream (the operator token's routes)."""

    def status(self) -> StreamStats:
        """The whole stream's counters and every consumer's."""
        return StreamStats.model_validate(self._post("/v1/operator/status", method="GET"))

    def mint(self, name: str, max_outstanding: int | None = None) -> str:
        """A consumer token under `name` (its own cap on unscored handles, optionally)."""
        body: dict[str, Any] = {"name": name}
        if max_outstanding is not None:
            body["max_outstanding"] = max_outstanding
        return Minted.model_validate(self._post("/v1/operator/tokens", body)).token

    def revoke(self, name: str) -> None:
        """Revoke a consumer's token: its next request is a 401, its pulls under way end
        and its handles are forgotten; not_found for a name never minted."""
        self._post(f"/v1/operator/tokens/{name}", method="DELETE")

    def export_key(self, path: str) -> str:
        """Have the stream write its key to a new 0600 file at an absolute path on the
        head; returns the key's fingerprint (conflict when the file exists)."""
        reply = self._post("/v1/operator/export-key", {"path": path})
        return Exported.model_validate(reply).key_fingerprint

    def configure(self, settings: BaseModel | dict[str, Any]) -> int:
        """Configure episode mode (EpisodeSettings, or its JSON as a dict); returns the
        bound on episodes in flight plus buffered."""
        body = settings.model_dump(mode="json") if isinstance(settings, BaseModel) else settings
        return int(self._post("/v1/operator/episodes", body)["bound"])

    def set_policy_version(self, version: int) -> None:
        """The policy version rollouts begun from now on carry (after a weight push)."""
        self._post("/v1/operator/episodes/policy-version", {"version": version})

    def stop(self) -> None:
        """Stop the stream: its key and the truths of unscored handles are gone for good."""
        self._post("/v1/operator/stop")
