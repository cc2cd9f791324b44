"""A sandbox that opens on first use.

Many episodes never run a command (a model that answers at once, the simulated agents
of the scale benchmark), and opening a sandbox costs a mount, cgroups or a container.
The episode's clock runs meanwhile: the first tool call pays for the start-up, so it
counts against the episode's budget exactly as an eager open would.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from orchestrator.sandbox.base import ExecResult, Sandbox


class LazySandbox(Sandbox):
    def __init__(self, factory: Callable[[], Sandbox], kind: str) -> None:
        self.factory = factory
        self.kind = kind
        self.files: Mapping[str, bytes] = {}
        self.box: Sandbox | None = None
        self.start_s = 0.0

    def open(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)

    def _ready(self) -> Sandbox:
        if self.box is None:
            started = time.monotonic()
            box = self.factory()
            box.open(self.files)
            self.box = box
            self.start_s = time.monotonic() - started
        return self.box

    def exec(self, command: str | Sequence[str], timeout_s: float) -> ExecResult:
        return self._ready().exec(command, timeout_s)

    def read_file(self, path: str, max_bytes: int = 16 * 1024 * 1024) -> bytes:
        return self._ready().read_file(path, max_bytes)

    def write_file(self, path: str, data: bytes) -> None:
        self._ready().write_file(path, data)

    def close(self) -> None:
        if self.box is not None:
            box, self.box = self.box, None
            box.close()
