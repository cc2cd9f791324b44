"""A trainer's handle on a stream: connect by Ray address and stream name.

    client = StreamClient("my-stream", address="127.0.0.1:6379")
    tasks = client.pull_tasks(8)                        # task mode
    scores = [client.score(t.handle, my_answer(t)) for t in tasks]
    client.configure(EpisodeSettings(endpoint=..., batch_size=8))   # episode mode
    batch = client.pull_episodes(8, min_policy_version=3, timeout_s=60)

Every method has an `_async` twin that returns an awaitable (Ray ObjectRefs are
awaitable), for trainers with an event loop. Errors the stream raises for a request
(an unknown handle, a pull over the bound) come back as StreamError.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

import ray
import ray.exceptions

from causal_gym.wire import TaskWire
from orchestrator.run.cluster import CONNECT_TIMEOUT_S, ClusterError, ensure_auth_token, probe
from orchestrator.stream.service import StreamError
from orchestrator.stream.types import EpisodeSettings, Rollout, StreamScore, StreamStats

NAMESPACE = "causal-gym"


def _unwrap(exc: ray.exceptions.RayError) -> Exception:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, StreamError):
        return StreamError(str(cause))
    if isinstance(exc, ray.exceptions.RayActorError):
        return StreamError(f"the stream is gone: {str(exc).splitlines()[0]}")
    return exc


class StreamClient:
    def __init__(
        self,
        name: str,
        address: str | None = "auto",
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        """Join the cluster at `address` (StreamError after `connect_timeout_s`) and
        find the stream `name`."""
        if not ray.is_initialized():
            try:
                probe(address or "auto", connect_timeout_s)
            except ClusterError as exc:
                raise StreamError(str(exc)) from exc
            ensure_auth_token()
            on_sigterm = signal.getsignal(signal.SIGTERM)
            ray.init(
                address=address,
                namespace=NAMESPACE,
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
            # Ray installs a SIGTERM handler of its own; the caller's goes back.
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, on_sigterm)
        try:
            self.actor = ray.get_actor(name, namespace=NAMESPACE)
        except ValueError as exc:
            raise StreamError(f"no stream named {name!r} in this cluster") from exc
        self.name = name

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return ray.get(getattr(self.actor, method).remote(*args, **kwargs))
        except ray.exceptions.RayError as exc:
            raise _unwrap(exc) from exc

    async def _acall(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self.actor, method).remote(*args, **kwargs)
        except ray.exceptions.RayError as exc:
            raise _unwrap(exc) from exc

    # task mode
    def pull_tasks(self, n: int) -> list[TaskWire]:
        tasks: list[TaskWire] = self._call("pull_tasks", n)
        return tasks

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        result: StreamScore = self._call("score", handle, submission)
        return result

    async def pull_tasks_async(self, n: int) -> list[TaskWire]:
        tasks: list[TaskWire] = await self._acall("pull_tasks", n)
        return tasks

    async def score_async(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        result: StreamScore = await self._acall("score", handle, submission)
        return result

    # episode mode
    def configure(self, settings: EpisodeSettings) -> int:
        bound: int = self._call("configure", settings)
        return bound

    def set_policy_version(self, version: int) -> None:
        self._call("set_policy_version", version)

    def pull_episodes(
        self, n: int, min_policy_version: int = 0, timeout_s: float = 0.0
    ) -> list[Rollout]:
        rollouts: list[Rollout] = self._call("pull_episodes", n, min_policy_version, timeout_s)
        return rollouts

    async def pull_episodes_async(
        self, n: int, min_policy_version: int = 0, timeout_s: float = 0.0
    ) -> list[Rollout]:
        rollouts: list[Rollout] = await self._acall(
            "pull_episodes", n, min_policy_version, timeout_s
        )
        return rollouts

    def stats(self) -> StreamStats:
        stats: StreamStats = self._call("stats")
        return stats
