"""Sandbox actors: agent episodes on any node of the cluster.

This is worker-side code. It imports the agents, the sandboxes and the public wire
format, and nothing that can generate a task, hold a truth or read a key (a test
imports it in a fresh interpreter and checks `sys.modules`). It receives a TaskWire
(staged files, prompt, schema, family, an opaque handle) and returns an
EpisodeResult; scoring happens on the head.

Several episodes run at once in one actor (`episodes_per_actor` threads): a
model-bound episode spends its time waiting on the model server, so a two-core node
holds dozens of them (thousands, for simulated ones).

A run hands an actor its task in two calls: `deliver` (the wire, fetched from the
head's object store into this process) and `play` (the handle). The head's copy of
the staged bytes is freed when `deliver` returns, so what the head holds per episode
in flight does not grow with the staged files; the bytes wait here, on the worker
node, until the episode ends. A few threads beyond the episodes' are kept for
deliveries, so a delivery never waits behind the episodes it feeds.

Each episode has a budget that starts before its sandbox does; a watchdog thread stops
an episode that outlives it (it closes the policy, which kills a user policy's process
or drops a model connection, and the sandbox, which kills every process in it) and
reports a timeout, so no policy can hold an actor hostage.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from causal_gym.wire import TaskWire
from orchestrator.agents.episode import EpisodeWatch, run_episode
from orchestrator.agents.loader import load_policy
from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.agents.types import EpisodeConfig, EpisodeResult, EpisodeStatus
from orchestrator.errors import OrchestratorError
from orchestrator.sandbox import SandboxLimits, make_sandbox
from orchestrator.sandbox.lazy import LazySandbox

#: How long past its budget an episode may take to wind down before it is abandoned.
WIND_DOWN_S = 10.0
#: Threads an actor keeps beyond its episodes' for `deliver` calls.
DELIVERY_THREADS = 4
#: How long `play` waits for its task's delivery (submitted just before it).
DELIVERY_WAIT_S = 60.0


class EpisodeSpec(BaseModel):
    """How every episode of a run is played (sent once to each actor)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    agent: str
    openai: OpenAIPolicyConfig | None = None
    sandbox: str = "local"
    image: str | None = None
    limits: dict[str, Any] = {}
    episode: EpisodeConfig = EpisodeConfig()


class EpisodeWorker:
    """Plain class (unit-tested without Ray); `EpisodeActor` is its Ray wrapper."""

    def __init__(self, spec: EpisodeSpec) -> None:
        self.spec = spec
        self.limits = SandboxLimits(**spec.limits)
        self._inbox: dict[str, TaskWire] = {}
        self._delivered = threading.Condition()

    def deliver(self, task: TaskWire) -> None:
        """Hold a task until `play` asks for it by its handle."""
        with self._delivered:
            self._inbox[task.handle] = task
            self._delivered.notify_all()

    def play(self, handle: str) -> EpisodeResult:
        """`run` on the task delivered under `handle`."""
        started = time.monotonic()
        with self._delivered:
            self._delivered.wait_for(lambda: handle in self._inbox, DELIVERY_WAIT_S)
            task = self._inbox.pop(handle, None)
        if task is None:
            return EpisodeResult(
                handle=handle,
                agent=self.spec.agent,
                status=EpisodeStatus.SANDBOX_ERROR,
                message=f"the task was not delivered within {DELIVERY_WAIT_S:g} s",
                wall_s=time.monotonic() - started,
            )
        return self.run(task)

    def where(self) -> dict[str, Any]:
        return {"host": socket.gethostname(), "pid": os.getpid(), "node": _node_id()}

    def run(self, task: TaskWire) -> EpisodeResult:
        """Play one episode of `task` within the budget, whatever the agent does."""
        return self.run_with(task, self.spec)

    def run_with(self, task: TaskWire, spec: EpisodeSpec) -> EpisodeResult:
        """`run` with this call's own spec (a stream re-points its episodes at a new
        endpoint or policy version without new actors)."""
        started = time.monotonic()
        budget = spec.episode.episode_timeout_s
        limits = SandboxLimits(**spec.limits) if spec.limits else self.limits
        try:
            policy = load_policy(spec.agent, spec.openai)
        except OrchestratorError as exc:
            return _failed(task, spec.agent, EpisodeStatus.AGENT_ERROR, str(exc), started)
        sandbox = LazySandbox(
            lambda: make_sandbox(spec.sandbox, limits, spec.image, spec.run_id), spec.sandbox
        )
        sandbox.open(task.files)
        config = spec.episode.model_copy(
            update={"episode_timeout_s": max(0.001, budget - (time.monotonic() - started))}
        )
        box: dict[str, EpisodeResult] = {}
        watch = EpisodeWatch()

        def play() -> None:
            box["result"] = run_episode(task, sandbox, policy, config, watch=watch)

        player = threading.Thread(target=play, name=f"episode-{task.handle}", daemon=True)
        player.start()
        player.join(budget + WIND_DOWN_S - (time.monotonic() - started))
        try:
            if player.is_alive():  # the loop ignored its deadline: stop it from outside
                held_by = "agent" if watch.phase == "policy" else "runner"
                where = "the agent's turn" if held_by == "agent" else "the runner or sandbox"
                _close_quietly(policy, sandbox)
                player.join(WIND_DOWN_S)
                failed = _failed(
                    task,
                    policy.name,
                    EpisodeStatus.TIMEOUT,
                    f"stopped from outside: the episode outlived its {budget:g} s budget "
                    f"in {where}",
                    started,
                )
                return failed.model_copy(update={"timeout_cause": held_by})
            result = box["result"]
            return result.model_copy(update={"sandbox_start_s": sandbox.start_s})
        finally:
            _close_quietly(policy, sandbox)


def _close_quietly(policy: Any, sandbox: LazySandbox) -> None:
    for closer in (policy.close, sandbox.close):
        try:
            closer()
        except Exception:
            continue


def _failed(
    task: TaskWire, agent: str, status: EpisodeStatus, message: str, started: float
) -> EpisodeResult:
    return EpisodeResult(
        handle=task.handle,
        agent=agent,
        status=status,
        message=message,
        wall_s=time.monotonic() - started,
    )


def _node_id() -> str | None:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id())
    except Exception:
        return None


def actor_class(num_cpus: float, episodes: int) -> Any:
    """The Ray actor class: `EpisodeWorker` behind a thin wrapper, placed anywhere,
    with a thread per episode and DELIVERY_THREADS more."""
    import ray

    options: dict[str, Any] = {
        "num_cpus": num_cpus,
        "max_concurrency": episodes + DELIVERY_THREADS,
        "max_restarts": 0,
    }
    return ray.remote(**options)(EpisodeWorker)
