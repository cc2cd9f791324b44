"""`docker` sandbox: one labelled container per episode, no network, hard limits.

Episode containers run the analyst image (docker_image.py) with `network_mode="none"`,
a read-only root filesystem, memory, pids and CPU totals, a file size limit, all
capabilities dropped and no-new-privileges. The only writable places are size-capped
tmpfs mounts: /workspace, /tmp and /dev/shm share the disk limit (3/4, 1/8, 1/8).

The container's own process (and tini, pid 1) run as root without capabilities; every
command runs as the agent's uid under an in-container `timeout -k` and a supervisor
that, before and after the command, kills every process of that uid: so nothing the
agent starts outlives its exec, however it detached. A host watchdog kills the
container if even that hangs. The host's file operations run inside the container as
the agent's uid too (host_files.py, the same checks as the local backend), so the
daemon's root never follows a symlink the agent planted. Containers carry labels
naming the run, the owner process and a deadline; `reap_containers` removes any a
crashed run left behind.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import socket
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import docker
import docker.errors
import docker.types

from orchestrator.errors import SandboxError, SandboxPathError
from orchestrator.sandbox.base import (
    KILL_GRACE_S,
    WORKSPACE,
    ExecResult,
    Sandbox,
    SandboxLimits,
    workspace_relpath,
)
from orchestrator.sandbox.container_limits import ContainerLimits
from orchestrator.sandbox.docker_exec import run_in_container
from orchestrator.sandbox.docker_image import (
    AGENT_UID,
    DEFAULT_IMAGE,
    DOCKER_ERRORS,
    LABEL,
    analyst_image,
    docker_client,
)

WATCHDOG_S = 5.0
FILE_OP_TIMEOUT_S = 60.0
LABEL_RUN = "causal-gym.run"
LABEL_OWNER = "causal-gym.owner"
LABEL_DEADLINE = "causal-gym.deadline"
AGENT = f"{AGENT_UID}:{AGENT_UID}"
HOST_FILES = (Path(__file__).with_name("host_files.py")).read_text("utf-8")
#: Runs the command in its own session, then kills what is left: its process group at
#: once, and then every process of the agent's uid but itself and its parent (the
#: exec's `timeout`), found by walking /proc. Each pass stops them all first (a stopped
#: process cannot fork, so a fork bomb cannot outrun the walk) and then kills them, until
#: a pass finds none. It runs before the command, after it, and when `timeout` signals.
#: Builtins only (no fork), so it works even with the pids limit exhausted; root's pid 1
#: and the container's own process refuse the signals.
_SUPERVISOR = """
reap() {
  [ -n "$p" ] && kill -KILL -"$p" 2>/dev/null
  for pass in 1 2 3 4 5 6 7 8 9 10; do
    found=
    for d in /proc/[0-9]*; do
      q=${d#/proc/}
      [ "$q" = $$ ] || [ "$q" = $PPID ] || {
        s=; { read -r s < "$d/stat"; } 2>/dev/null
        case "$s" in *") Z "*|"") ;; *) kill -STOP "$q" 2>/dev/null && found=1 ;; esac
      }
    done
    [ -n "$found" ] || return 0
    for d in /proc/[0-9]*; do
      q=${d#/proc/}
      [ "$q" = $$ ] || [ "$q" = $PPID ] || kill -KILL "$q" 2>/dev/null
    done
  done
}
p=
reap
setsid sh -c "$1" & p=$!
trap 'reap; exit 143' TERM INT
wait $p; r=$?
reap
exit $r
"""


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
    # ignore_removed: list() inspects each container it found, one by one, and one that
    # another reaper or its own runner removes in between is gone (a 404 that once
    # failed a reap under xdist); it needs no reaping then.
    listed = client.containers.list(all=True, filters={"label": LABEL}, ignore_removed=True)
    for container in listed:
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
            except docker.errors.APIError as exc:  # another reaper is removing it
                if exc.status_code != 409:
                    raise
    return removed


def _tmpfs_sizes(limits: SandboxLimits) -> tuple[int, int, int]:
    """Bytes for /workspace, /tmp and /dev/shm: 3/4, 1/8 and 1/8 of the disk limit."""
    total = limits.disk_mb << 20
    return total - 2 * (total // 8), total // 8, total // 8


def setup(image: str | None = None) -> str:
    """Build (once) the analyst image the containers run."""
    from orchestrator.sandbox.docker_image import analyst_image, docker_client

    return f"docker image ready: {analyst_image(docker_client(), image or DEFAULT_IMAGE)}"


def reap_for_run(run_id: str | None = None) -> list[str]:
    """The registry's reaper: containers of dead owners (and of `run_id`)."""
    from orchestrator.sandbox.docker_image import docker_client

    return reap_containers(docker_client(), run_id)


class DockerSandbox(Sandbox):
    kind = "docker"

    @classmethod
    def create(
        cls, limits: SandboxLimits | None, image: str | None, run_id: str | None
    ) -> DockerSandbox:
        """The registry's factory."""
        return cls(limits, image or DEFAULT_IMAGE, run_id)

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
        self._limits: ContainerLimits | None = None

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
        workspace, tmp, shm = _tmpfs_sizes(lim)
        file_bytes = lim.file_mb << 20
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
                user="0:0",  # only pid 1 and `sleep`; every exec runs as AGENT_UID
                working_dir=WORKSPACE,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                environment={},
                read_only=True,
                tmpfs={
                    WORKSPACE: f"size={workspace},mode=0755,uid={AGENT_UID},gid={AGENT_UID},exec",
                    "/tmp": f"size={tmp},mode=1777,exec",
                },
                shm_size=shm,
                ulimits=[
                    docker.types.Ulimit(name="fsize", soft=file_bytes, hard=file_bytes),
                    docker.types.Ulimit(name="core", soft=0, hard=0),
                    docker.types.Ulimit(name="nofile", soft=1024, hard=1024),
                ],
            )
            for name, data in files.items():
                self.write_file(name, data)
        except DOCKER_ERRORS as exc:
            self.close()
            raise SandboxError(f"starting the episode container failed: {exc}") from exc
        except BaseException:
            self.close()
            raise

    def _run(self, argv: list[str], wait_s: float, cap: int, stdin: bytes | None = None) -> Any:
        if self.container is None or self.client is None:
            raise SandboxError("the sandbox is not open")
        return run_in_container(
            self.client,
            self.container.id,
            argv,
            user=AGENT,
            workdir=WORKSPACE,
            wait_s=wait_s,
            cap=cap,
            stdin=stdin,
        )

    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        script = command if isinstance(command, str) else shlex.join(command)
        wrapped = ["timeout", "-k", f"{KILL_GRACE_S:g}", f"{timeout_s:g}"]
        wrapped += ["sh", "-c", _SUPERVISOR, "sh", script]
        counters = self._counters()
        before = counters.counters() if counters else {}
        started = time.monotonic()
        outcome = self._run(
            wrapped, timeout_s + KILL_GRACE_S + WATCHDOG_S, self.limits.output_bytes
        )
        if outcome.hung:  # even the in-container timeout failed: take the container down
            self._kill()
        duration = time.monotonic() - started
        code = outcome.exit_code
        timed_out = outcome.hung or (code in (124, 137, 143) and duration >= timeout_s - 0.5)
        killed = code == 137 and not timed_out
        hit = counters.hit_since(before) if counters and counters.readable else ()
        if killed and "memory" not in hit:
            hit = ("memory", *hit)
        return ExecResult(
            exit_code=None if timed_out else code,
            stdout=outcome.stdout.decode("utf-8", "replace"),
            stderr=outcome.stderr.decode("utf-8", "replace"),
            timed_out=timed_out,
            truncated=outcome.dropped > 0,
            duration_s=duration,
            limits_hit=hit,
        )

    def _counters(self) -> ContainerLimits | None:
        """The container's limit counters (found once, when first asked)."""
        if self._limits is None and self.container is not None:
            with contextlib.suppress(*DOCKER_ERRORS, KeyError, TypeError):
                self.container.reload()
                self._limits = ContainerLimits(int(self.container.attrs["State"]["Pid"]))
        return self._limits

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        rel = workspace_relpath(path)
        argv = ["python", "-c", HOST_FILES, "read", WORKSPACE, rel, str(max_bytes)]
        outcome = self._run(argv, FILE_OP_TIMEOUT_S, max_bytes)
        return self._file_result(outcome, rel, "read")

    def write_file(self, path: str, data: bytes) -> None:
        rel = workspace_relpath(path)
        argv = ["python", "-c", HOST_FILES, "write", WORKSPACE, rel]
        self._file_result(self._run(argv, FILE_OP_TIMEOUT_S, 64 * 1024, stdin=data), rel, "write")

    def _file_result(self, outcome: Any, rel: str, action: str) -> bytes:
        if outcome.hung:
            self._kill()
            raise SandboxError(f"{action} of {rel!r} did not finish; the container was stopped")
        if outcome.exit_code == 3:
            raise SandboxPathError(outcome.stderr.decode("utf-8", "replace").strip())
        if outcome.exit_code != 0:
            detail = outcome.stderr.decode("utf-8", "replace").strip()[-500:]
            raise SandboxError(f"{action} of {rel!r} failed (exit {outcome.exit_code}): {detail}")
        data: bytes = outcome.stdout
        return data

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
                self._limits = None
