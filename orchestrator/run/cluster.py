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
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import ray

from orchestrator.errors import ClusterError
from orchestrator.host.owners import dies_with_parent
from orchestrator.run.config import HEAD_RESOURCE

#: Default deadline for joining a cluster (`connect_timeout_s` in a run config).
CONNECT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Cluster:
    started_here: bool
    head_node: str
    nodes: int
    cpus: float
    #: The marker of the embedded instance this process started (leftovers.py).
    marker: Path | None = None


def _check_reachable(address: str, timeout_s: float) -> None:
    if address in ("auto", "local") or address.startswith("ray://"):
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--address {address!r} is not HOST:PORT (or 'auto')")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ClusterError(
            f"cannot reach a Ray cluster at {address} ({exc.strerror or exc}): start it with "
            "`ray start --head`, or leave out --address for an embedded local Ray"
        ) from exc


_PROBE = (
    "import logging, sys, ray\n"
    "ray.init(address=sys.argv[1], logging_level=logging.ERROR, log_to_driver=False)\n"
    "print('joined', len(ray.nodes()))\n"
)


def probe(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise ClusterError unless a Ray cluster answers at `address` within `timeout_s`.

    Ray's own join has no deadline a caller can set: at an address where nothing
    listens it retried for over ten minutes, and at a port that is not a Ray GCS it
    ends the whole process after a minute. So the join is tried first in a child
    process that is killed at the deadline (or when this process is interrupted):
    a TCP connect, then a real `ray.init`."""
    started = time.monotonic()
    _check_reachable(address, timeout_s)
    if address == "local":
        return
    ensure_auth_token()
    left = max(1.0, timeout_s - (time.monotonic() - started))
    try:
        done = subprocess.run(
            [*dies_with_parent(), sys.executable, "-c", _PROBE, address],
            capture_output=True,
            text=True,
            timeout=left,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(
            f"no Ray cluster answered at {address} within {timeout_s:g} s (the connect "
            "timeout): check the address and that the cluster runs"
        ) from exc
    if done.returncode != 0 or "joined" not in done.stdout:
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        raise ClusterError(f"cannot join the Ray cluster at {address}: {last[0][:300]}")


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


def connect(
    address: str | None, num_cpus: int | None = None, timeout_s: float = CONNECT_TIMEOUT_S
) -> Cluster:
    """Start (or join) Ray; the key must already be out of this process's environment.
    Joining a cluster fails with a ClusterError after `timeout_s` (see `probe`)."""
    if os.environ.get("CAUSAL_GYM_KEY"):
        raise ClusterError("internal: the key is still in the environment; Ray would copy it")
    if address:
        probe(address, timeout_s)
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
    from orchestrator.run.leftovers import boot_ticks

    since = boot_ticks()  # every process of an embedded instance starts after this
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
    marker = None if address else _note_embedded(since)
    try:
        return replace(_check_head(started_here=address is None), marker=marker)
    except ClusterError:
        disconnect(Cluster(address is None, "", 0, 0, marker))
        raise


def _note_embedded(since: int) -> Path | None:
    """Mark the embedded instance as this process's, so that whatever of it outlives a
    SIGKILL of this process is found and removed by the next run (leftovers.py)."""
    from orchestrator.run.leftovers import note_embedded_ray

    node = getattr(ray._private.worker, "_global_node", None)
    if node is None:
        return None
    return note_embedded_ray(node.get_session_dir_path(), str(node.node_id), since)


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
    from orchestrator.run.leftovers import forget_embedded_ray

    with contextlib.suppress(Exception):
        ray.shutdown()
    forget_embedded_ray(cluster.marker)
