"""`docker` sandbox: one labelled container per episode, no network, hard limits.

Episode containers run the analyst image (docker_image.py) as an unprivileged user with
`network_mode="none"`, memory/pids/CPU limits, all capabilities dropped and
no-new-privileges. Every exec is wrapped in the image's own `timeout -k`, and a host
watchdog kills the container if even that hangs. Containers carry labels naming the
run, the owner process and a deadline; `reap_containers` removes any a crashed run
left behind.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import docker
import docker.errors

from orchestrator.errors import SandboxError, SandboxPathError
from orchestrator.sandbox.base import (
    KILL_GRACE_S,
    WORKSPACE,
    ExecResult,
    Sandbox,
    SandboxLimits,
    workspace_relpath,
)
from orchestrator.sandbox.docker_image import (
    AGENT_UID,
    DEFAULT_IMAGE,
    DOCKER_ERRORS,
    LABEL,
    analyst_image,
    docker_client,
)

WATCHDOG_S = 5.0
LABEL_RUN = "causal-gym.run"
LABEL_OWNER = "causal-gym.owner"
LABEL_DEADLINE = "causal-gym.deadline"
#: Runs the command as its own process group and kills whatever is left of that group
#: when the command ends or `timeout` signals, so background processes (a fork bomb's
#: included) never outlive their exec. `kill` is a shell builtin: it works even when
#: the pids limit is exhausted.
_SUPERVISOR = (
    'setsid sh -c "$1" & p=$!; '
    "trap 'kill -KILL -$p 2>/dev/null; exit 143' TERM INT; "
    "wait $p; r=$?; kill -KILL -$p 2>/dev/null; exit $r"
)


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_containers(
    client: docker.DockerClient, run_id: str | None = None, now: float | None = None
) -> list[str]:
    """Remove labelled containers that are past their deadline, whose owning process on
    this host is gone, or that belong to `run_id`. Returns the removed names."""
    now = time.time() if now is None else now
    host = socket.gethostname()
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        labels = container.labels
        owner_host, _, owner_pid = labels.get(LABEL_OWNER, ":").rpartition(":")
        stale = float(labels.get(LABEL_DEADLINE, "0")) < now
        orphan = owner_host == host and owner_pid.isdigit() and not _pid_alive(int(owner_pid))
        mine = run_id is not None and labels.get(LABEL_RUN) == run_id
        if stale or orphan or mine:
            try:
                container.remove(force=True)
                removed.append(container.name)
            except docker.errors.NotFound:
                pass
    return removed


def _tar_of(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(workspace_relpath(name))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            info.uid = info.gid = AGENT_UID
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class DockerSandbox(Sandbox):
    kind = "docker"

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        image: str = DEFAULT_IMAGE,
        run_id: str | None = None,
        lifetime_s: float = 3600.0,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self.base_image = image
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.lifetime_s = lifetime_s
        self.client: docker.DockerClient | None = None
        self.container: Any = None

    def open(self, files: Mapping[str, bytes]) -> None:
        if self.container is not None:
            raise SandboxError("sandbox already open")
        self.client = docker_client()
        reap_containers(self.client)
        image = analyst_image(self.client, self.base_image)
        lim = self.limits
        labels = {
            LABEL: "episode",
            LABEL_RUN: self.run_id,
            LABEL_OWNER: _owner(),
            LABEL_DEADLINE: f"{time.time() + self.lifetime_s:.0f}",
        }
        try:
            self.container = self.client.containers.run(
                image,
                ["sleep", "infinity"],
                detach=True,
                name=f"causal-gym-{uuid.uuid4().hex[:12]}",
                network_mode="none",
                mem_limit=f"{lim.memory_mb}m",
                memswap_limit=f"{lim.memory_mb}m",
                pids_limit=lim.pids,
                nano_cpus=int(lim.cpus * 1e9),
                labels=labels,
                user=f"{AGENT_UID}:{AGENT_UID}",
                working_dir=WORKSPACE,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                environment={},
            )
            if files:
                self.container.put_archive(WORKSPACE, _tar_of(files))
        except DOCKER_ERRORS as exc:
            self.close()
            raise SandboxError(f"starting the episode container failed: {exc}") from exc

    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        if self.container is None or self.client is None:
            raise SandboxError("exec on a sandbox that is not open")
        script = command if isinstance(command, str) else shlex.join(command)
        wrapped = [
            "timeout",
            "-k",
            f"{KILL_GRACE_S:g}",
            f"{timeout_s:g}",
            "sh",
            "-c",
            _SUPERVISOR,
            "sh",
            script,
        ]
        api = self.client.api
        cap = self.limits.output_bytes
        kept = {1: bytearray(), 2: bytearray()}
        dropped = [0]
        started = time.monotonic()
        try:
            exec_id = api.exec_create(
                self.container.id, wrapped, workdir=WORKSPACE, user=f"{AGENT_UID}:{AGENT_UID}"
            )["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=True)
        except DOCKER_ERRORS as exc:
            raise SandboxError(f"docker exec failed: {exc}") from exc

        def drain() -> None:
            try:
                for out, err in stream:
                    for fd, chunk in ((1, out), (2, err)):
                        if chunk:
                            room = max(cap - len(kept[fd]), 0)
                            kept[fd] += chunk[:room]
                            dropped[0] += max(len(chunk) - room, 0)
            except DOCKER_ERRORS:
                pass

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        reader.join(timeout_s + KILL_GRACE_S + WATCHDOG_S)
        hung = reader.is_alive()
        if hung:  # even the in-container timeout failed: take the container down
            self._kill()
        duration = time.monotonic() - started
        exit_code = None
        if not hung:
            exit_code = api.exec_inspect(exec_id).get("ExitCode")
        timed_out = hung or (exit_code in (124, 137, 143) and duration >= timeout_s - 0.5)
        return ExecResult(
            exit_code=None if timed_out else exit_code,
            stdout=kept[1].decode("utf-8", "replace"),
            stderr=kept[2].decode("utf-8", "replace"),
            timed_out=timed_out,
            truncated=dropped[0] > 0,
            duration_s=duration,
        )

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        if self.container is None:
            raise SandboxError("file access on a sandbox that is not open")
        rel = workspace_relpath(path)
        try:
            bits, _stat = self.container.get_archive(f"{WORKSPACE}/{rel}")
        except docker.errors.NotFound as exc:
            raise SandboxPathError(f"cannot read {path!r} from {WORKSPACE}: not found") from exc
        except DOCKER_ERRORS as exc:
            raise SandboxError(f"reading {path!r} failed: {exc}") from exc
        with tarfile.open(fileobj=io.BytesIO(b"".join(bits))) as tar:
            member = tar.next()
            if member is None or not member.isreg():
                raise SandboxPathError(f"{path!r} is not a regular file")
            handle = tar.extractfile(member)
            return handle.read(max_bytes) if handle else b""

    def write_file(self, path: str, data: bytes) -> None:
        if self.container is None:
            raise SandboxError("file access on a sandbox that is not open")
        rel = workspace_relpath(path)
        parent = os.path.dirname(rel)
        if parent:
            self.exec(["mkdir", "-p", parent], 30)
        try:
            self.container.put_archive(
                f"{WORKSPACE}/{parent}".rstrip("/"), _tar_of({os.path.basename(rel): data})
            )
        except DOCKER_ERRORS as exc:
            raise SandboxError(f"writing {path!r} failed: {exc}") from exc

    def _kill(self) -> None:
        with contextlib.suppress(*DOCKER_ERRORS):
            self.container.kill()

    def close(self) -> None:
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except docker.errors.NotFound:
                pass
            except DOCKER_ERRORS as exc:
                raise SandboxError(
                    f"removing container {self.container.name} failed: {exc}"
                ) from exc
            finally:
                self.container = None
