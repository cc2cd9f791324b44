"""One `docker exec` with optional stdin, capped output and a host-side watchdog.

Everything the Docker backend runs in a container goes through here: the agent's
commands and the host's own file operations (which run as the agent's uid, so the
daemon's root never touches a path the agent prepared). The exec's raw socket carries
stdin in and the multiplexed stdout/stderr frames out; a reader thread keeps the
first `cap` bytes of each stream and counts the rest, and if the stream has not
ended `watchdog_s` after the deadline, the caller is told it hung.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
from docker.utils.socket import frames_iter

from orchestrator.errors import SandboxError
from orchestrator.sandbox.docker_image import DOCKER_ERRORS


@dataclass(frozen=True)
class ExecOutcome:
    exit_code: int | None  # None when the stream never ended (hung)
    stdout: bytes
    stderr: bytes
    dropped: int
    hung: bool


def _raw_socket(sock: Any) -> socket.socket:
    return getattr(sock, "_sock", sock)  # SocketIO over a unix socket, or the socket


def run_in_container(
    client: docker.DockerClient,
    container_id: str,
    argv: list[str],
    *,
    user: str,
    workdir: str,
    wait_s: float,
    cap: int,
    stdin: bytes | None = None,
) -> ExecOutcome:
    """Run `argv`; give up on the stream after `wait_s` (the caller adds its grace)."""
    api = client.api
    kept = {1: bytearray(), 2: bytearray()}
    dropped = [0]
    try:
        exec_id = api.exec_create(
            container_id, argv, workdir=workdir, user=user, stdin=stdin is not None
        )["Id"]
        sock = api.exec_start(exec_id, socket=True)
    except DOCKER_ERRORS as exc:
        raise SandboxError(f"docker exec failed: {exc}") from exc
    raw = _raw_socket(sock)

    def pump() -> None:
        with contextlib.suppress(OSError, *DOCKER_ERRORS):
            if stdin is not None:
                raw.sendall(stdin)
                raw.shutdown(socket.SHUT_WR)
            for stream, chunk in frames_iter(sock, tty=False):
                if stream in kept and chunk:
                    room = max(cap - len(kept[stream]), 0)
                    kept[stream] += chunk[:room]
                    dropped[0] += max(len(chunk) - room, 0)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    reader.join(wait_s)
    hung = reader.is_alive()
    with contextlib.suppress(OSError):
        raw.close()
    exit_code = None
    if not hung:
        try:
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        except DOCKER_ERRORS as exc:
            raise SandboxError(f"docker exec inspect failed: {exc}") from exc
    return ExecOutcome(exit_code, bytes(kept[1]), bytes(kept[2]), dropped[0], hung)
