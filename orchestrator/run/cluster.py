"""Joining Ray: an embedded local instance by default, a cluster with --address.

The local instance advertises the head resource itself. A cluster's head must have
been started with it (`ray start --head --resources='{"causal_gym_head": 1}'`), and
the runner must run on that node: the key file, the head actors and results.jsonl all
live there. Both are checked before any work, as is the reachability of the address
(Ray itself would retry for a long while before saying no).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import ray

from orchestrator.errors import OrchestratorError
from orchestrator.run.config import HEAD_RESOURCE

CONNECT_TIMEOUT_S = 5.0


class ClusterError(OrchestratorError):
    """Raised before any work when the cluster cannot run causal-gym."""


@dataclass(frozen=True)
class Cluster:
    started_here: bool
    head_node: str
    nodes: int
    cpus: float


def _check_reachable(address: str) -> None:
    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--address {address!r} is not HOST:PORT (or 'auto')")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ClusterError(
            f"cannot reach a Ray cluster at {address} ({exc.strerror or exc}): start it with "
            "`ray start --head`, or leave out --address for an embedded local Ray"
        ) from exc


def ensure_auth_token() -> None:
    """Put this process and the token file in one consistent state before ray.init.

    Every Ray start here uses token authentication (the head holds the key). Two
    pieces of Ray's process-wide state make that fragile when one process starts Ray
    more than once, as tests and trainers do:

    - the auth mode is read into a C++ config once; a process that touched Ray while
      RAY_AUTH_MODE was unset keeps "disabled" even after the variable is set, and
      its next local start sends no token to a GCS that requires one;
    - the token is cached per process, and Ray 2.60 writes ~/.ray/auth_token with a
      plain open-and-write when it finds none, so two first starts at once on a fresh
      machine each write their own token.

    So: create the token file once, atomically (link of a finished temporary, first
    writer wins), then switch this process to token mode through Ray's own helper
    (which re-reads the config) and drop its token cache.
    """
    if not (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")):
        _create_token_file(Path.home() / ".ray" / "auth_token")
    from ray._private.authentication.authentication_token_setup import _enable_token_auth
    from ray._raylet import AuthenticationTokenLoader  # type: ignore[attr-defined]

    _enable_token_auth()
    AuthenticationTokenLoader.instance().reset_cache()


def _create_token_file(path: Path) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".auth_token.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temporary, path)
    except FileExistsError:
        pass  # another process was first; its token is the one everybody reads
    finally:
        temporary.unlink()


def connect(address: str | None, num_cpus: int | None = None) -> Cluster:
    """Start (or join) Ray; the key must already be out of this process's environment."""
    if os.environ.get("CAUSAL_GYM_KEY"):
        raise ClusterError("internal: the key is still in the environment; Ray would copy it")
    if address:
        _check_reachable(address)
    # Token authentication, embedded or cluster (README, "On a cluster"): anyone who
    # can reach an open Ray instance can run code on the head, where the key is.
    ensure_auth_token()
    options = {
        "include_dashboard": False,
        "log_to_driver": False,
        "namespace": "causal-gym",
        "logging_level": logging.ERROR,  # our own display reports; Ray's INFO lines do not
    }
    on_sigterm = signal.getsignal(signal.SIGTERM)
    try:
        if address:
            ray.init(address=address, **options)  # type: ignore[arg-type]
        else:
            ray.init(address="local", num_cpus=num_cpus, resources={HEAD_RESOURCE: 1.0}, **options)  # type: ignore[arg-type]
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"cannot start or join Ray: {str(exc).splitlines()[0]}") from exc
    finally:
        # Ray's core installs a crash handler for SIGTERM that ends the process at
        # once; the CLI's own handler (a graceful stop through the finally blocks)
        # goes back in place.
        if callable(on_sigterm) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return _check_head(started_here=address is None)
    except ClusterError:
        disconnect(Cluster(address is None, "", 0, 0))
        raise


def _check_head(started_here: bool) -> Cluster:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    heads = [n for n in nodes if n.get("Resources", {}).get(HEAD_RESOURCE)]
    if not heads:
        raise ClusterError(
            f"no node of the cluster advertises the {HEAD_RESOURCE!r} resource: start the "
            f"head with ray start --head --resources='{{\"{HEAD_RESOURCE}\": 1}}'"
        )
    here = ray.get_runtime_context().get_node_id()
    head = heads[0]["NodeID"]
    if here not in {n["NodeID"] for n in heads}:
        raise ClusterError(
            "run causal-gym-run on the head node (the one with the "
            f"{HEAD_RESOURCE!r} resource): the key, the scorer and results.jsonl stay there"
        )
    cpus = sum(n.get("Resources", {}).get("CPU", 0.0) for n in nodes)
    return Cluster(started_here, head, len(nodes), cpus)


def disconnect(cluster: Cluster) -> None:
    with contextlib.suppress(Exception):
        ray.shutdown()
