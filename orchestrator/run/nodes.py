"""Which node each sandbox actor landed on, and whether a dead actor's node is gone.

An episode whose actor died is run again either way; what the record says about why
differs. A node that died (`ray stop`, a preempted VM, an OOM-killed raylet) or stopped
answering takes every actor on it, which is the cluster's failure and is retried
outside the run's retry cap (`node_lost`); an actor that died on a live node is the
episode's (`lost`). Ray tells the two apart only in prose, so this asks the GCS
whether the actor's node is still alive, once per second at most.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import ray
import ray.exceptions

#: How long an answer about the cluster's live nodes is reused.
NODES_TTL_S = 1.0


def _actor_key(actor: Any) -> bytes:
    return bytes(actor._actor_id.binary())


class NodeWatch:
    def __init__(self) -> None:
        self._where: dict[bytes, Any] = {}  # actor -> the ObjectRef of its `where`
        self._node: dict[bytes, str] = {}  # actor -> node id, once it answered
        self._lock = threading.Lock()
        self._alive: set[str] = set()
        self._asked = 0.0

    def place(self, actor: Any) -> None:
        """Ask a new actor where it runs (answered once it is placed)."""
        key = _actor_key(actor)
        ref = actor.where.remote()
        self._where[key] = ref

        def noted(outcome: Any) -> None:
            try:
                node = outcome.result().get("node")
            except Exception:  # it died before answering: lost() will say so
                return
            with self._lock:
                if node:
                    self._node[key] = str(node)

        ref.future().add_done_callback(noted)

    def wait_placed(self, actors: list[Any], timeout: float) -> list[dict[str, Any]]:
        """Every actor's `where` answer (raises GetTimeoutError past `timeout`)."""
        return list(ray.get([self._where[_actor_key(a)] for a in actors], timeout=timeout))

    def node_of(self, actor: Any) -> str | None:
        with self._lock:
            return self._node.get(_actor_key(actor))

    def lost(self, actor: Any, error: ray.exceptions.RayActorError) -> str | None:
        """A few words on the lost node, when the dead actor's node is gone or not
        answering; None when the actor died on a live node."""
        node = self.node_of(actor)
        short = node[:12] if node else "unknown"
        if isinstance(error, ray.exceptions.ActorUnavailableError):
            return f"node {short} stopped answering"
        if node is not None and node not in self._alive_nodes(fresh=True):
            return f"node {short} died"
        if node is None and "node" in str(error).lower() and "died" in str(error).lower():
            return f"node {short} died"  # it died before saying where it ran
        return None

    def _alive_nodes(self, fresh: bool = False) -> set[str]:
        """The live nodes, asked again when the last answer is older than NODES_TTL_S
        (or, `fresh`, than a tenth of it: a node's actors die together, and the first
        of them to come back asks for all)."""
        now = time.monotonic()
        if now - self._asked > (NODES_TTL_S / 10 if fresh else NODES_TTL_S):
            self._alive = {str(n["NodeID"]) for n in ray.nodes() if n.get("Alive")}
            self._asked = now
        return self._alive
