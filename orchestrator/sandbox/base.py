"""The sandbox interface both backends implement, and what an exec returns.

One small surface (open with staged files, exec with a deadline and capped output,
read and write workspace files, close) so the episode loop never knows which engine
runs the agent's commands.
"""

from __future__ import annotations

import posixpath
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Self

from orchestrator.errors import SandboxPathError

WORKSPACE = "/workspace"
#: Extra wall time allowed past a command's deadline before the host kills it all.
KILL_GRACE_S = 2.0
#: A writable place with less free space than this after a command counts as the
#: disk limit reached (both backends).
DISK_FULL_BYTES = 1 << 20


@dataclass(frozen=True)
class SandboxLimits:
    """Totals per sandbox (all its processes together) where the backend can enforce
    them: memory, processes, CPUs, and disk across /workspace, /tmp and /dev/shm;
    plus a per-process file size and a cap on captured output."""

    memory_mb: int = 2048
    pids: int = 256
    cpus: float = 1.0
    output_bytes: int = 64 * 1024
    file_mb: int = 512
    disk_mb: int = 1024

    def __post_init__(self) -> None:
        if (
            self.memory_mb < 64
            or self.pids < 8
            or not 0 < self.cpus <= 256
            or self.output_bytes < 1
            or self.file_mb < 1
            or self.disk_mb < 16
        ):
            raise ValueError(f"sandbox limits out of range: {self}")


@dataclass(frozen=True)
class ExecResult:
    """What one exec returns to the episode loop: the exit code, the captured (capped)
    output, and whether a deadline or a limit cut it short."""

    exit_code: int | None  # None when the command was killed at its deadline
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration_s: float
    #: Sandbox totals the command ran into ("memory", "processes", "disk"), as far as
    #: the backend can tell; the agent is told, so a killed process is not a mystery.
    limits_hit: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the command exited 0 within its deadline."""
        return self.exit_code == 0 and not self.timed_out


def workspace_relpath(path: str) -> str:
    """Normalize a path inside /workspace; anything that escapes it is refused."""
    if path.startswith(WORKSPACE + "/"):
        path = path[len(WORKSPACE) + 1 :]
    norm = posixpath.normpath(path)
    if norm in ("", ".") or norm.startswith("../") or norm == ".." or posixpath.isabs(norm):
        raise SandboxPathError(f"{path!r} is not a file path inside {WORKSPACE}")
    return norm


class CappedReader:
    """Drains a pipe on a thread, keeping the first `cap` bytes and counting the rest,
    so a chatty command can neither block on a full pipe nor flood host memory."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.read(65536):
                self.feed(chunk)
        except (OSError, ValueError):
            pass

    def feed(self, chunk: bytes) -> None:
        """Keep the part of a chunk that fits under the cap, and count the rest."""
        room = self.cap - len(self.kept)
        self.kept += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)

    def join(self, timeout: float) -> None:
        """Wait at most `timeout` seconds for the pipe to be drained; after that the
        text is what was read so far."""
        self._thread.join(timeout)

    def text(self) -> str:
        """The kept bytes as text (invalid UTF-8 replaced, never an error)."""
        return self.kept.decode("utf-8", errors="replace")


class Sandbox(ABC):
    """Context manager: `with open_sandbox(...) as box: box.exec(...)`."""

    kind: str

    @abstractmethod
    def open(self, files: Mapping[str, bytes]) -> None:
        """Create the sandbox and stage `files` (name -> bytes) into /workspace."""

    @abstractmethod
    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        """Run a shell command (str) or argv in /workspace; killed at the deadline."""

    @abstractmethod
    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        """At most `max_bytes` of a regular file in /workspace; symlinks, FIFOs,
        devices, directories and escapes are refused without blocking or loading."""

    @abstractmethod
    def write_file(self, path: str, data: bytes) -> None:
        """Create or replace a regular file in /workspace without following anything
        the agent put at that name (a symlink there is replaced, not written through)."""

    @abstractmethod
    def close(self) -> None:
        """Kill everything still running and remove the sandbox; idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
