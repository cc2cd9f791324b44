"""GRPO's groups: the rollouts a trainer compares with each other must answer one task.

A trainer names a group its own way (TRL a dataset row's `task_slot`, verl the `uid`
it gives the copies of one prompt). The first claim under a name pulls one task under
`size` single-use handles (a stream hands a group out that way; each handle is scored
once); the next `size - 1` claims take the other handles; the claim after that pulls a
new task, so a name can be reused from one step to the next.
"""

from __future__ import annotations

import atexit
import threading
from collections import deque
from collections.abc import Hashable

from causal_gym.wire import TaskWire
from orchestrator.errors import IntegrationError
from orchestrator.integrations.settings import AdapterSettings
from orchestrator.integrations.sources import TaskSource


class GroupBoard:
    """The open groups of one source and group size: the claims under one name share a
    task, each under a handle of its own."""

    def __init__(
        self, source: TaskSource, size: int, families: tuple[str, ...] | None = None
    ) -> None:
        if size < 1:
            raise IntegrationError(f"a group has at least 1 rollout, not {size}")
        self.source, self.size, self.families = source, size, families
        self._open: dict[Hashable, deque[tuple[TaskWire, str]]] = {}
        self._lock = threading.Lock()
        self.tasks_pulled = 0

    def claim(self, name: Hashable) -> tuple[TaskWire, str]:
        """The task for group `name` and the handle this rollout answers under."""
        with self._lock:
            pending = self._open.get(name)
            if not pending:
                task, handles = self.source.next_group(self.size)
                if self.families is not None and task.family.value not in self.families:
                    raise IntegrationError(
                        f"this adapter answers {', '.join(self.families)} tasks, got a "
                        f"{task.family.value} task: give its source those families"
                    )
                pending = deque((task, handle) for handle in handles)
                self._open[name] = pending
                self.tasks_pulled += 1
            claimed = pending.popleft()
            if not pending:
                del self._open[name]  # used up: the name's next claim is a new task
            return claimed

    @property
    def open_groups(self) -> int:
        """Groups with handles nobody has claimed yet."""
        with self._lock:
            return len(self._open)


class BoardRegistry:
    """One source and one board per settings and group size, per process. Trainers
    that make an environment or agent loop per trajectory (SkyRL, verl) need them to
    share their groups, and a stream client or a local generator per trajectory
    would be waste."""

    def __init__(self) -> None:
        self._boards: dict[tuple[str, int], GroupBoard] = {}
        self._lock = threading.Lock()

    def get(self, settings: AdapterSettings, size: int) -> GroupBoard:
        """The board of these settings and group size, made (with its source) on first use."""
        name = (settings.model_dump_json(), size)
        with self._lock:
            if name not in self._boards:
                families = settings.families if settings.rendering != "readme" else None
                self._boards[name] = GroupBoard(settings.source(), size, families)
            return self._boards[name]

    def close(self) -> None:
        """Close every source (a local one forgets its key and truths)."""
        with self._lock:
            for board in self._boards.values():
                board.source.close()
            self._boards.clear()


BOARDS = BoardRegistry()
atexit.register(BOARDS.close)
