"""Where a trainer adapter gets its tasks and their scores: a stream over HTTP, or a
generator in this process under a fresh key.

Both hand out public tasks (`TaskWire`, under an opaque single-use handle) and score a
handle once. `StreamSource` holds only a consumer token: the key and the truths stay in
the stream's supply workers. `LocalSource` is for one machine with no stream running:
it is the stream's own supply worker (supply.TaskSupply) run in this process, so the
key is made here and lives only in this process's memory (its key file is removed at
once); it is never printed or returned, and written only where `export_key` is told
to. A trainer that holds a LocalSource can therefore reach the key, which is why a
shared or remote trainer gets a stream.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Protocol

from causal_gym.task_id import FAMILIES
from causal_gym.wire import TaskWire
from orchestrator.errors import IntegrationError
from orchestrator.stream import default_families
from orchestrator.stream.types import StreamScore

#: The families a source serves unless told otherwise (the stream's default).
DEFAULT_FAMILIES: tuple[str, ...] = default_families()


class TaskSource(Protocol):
    """What an adapter needs of a source: public tasks under single-use handles, each
    handle scored once."""

    def next_task(self) -> TaskWire:
        """The next task, under a handle of its own."""

    def next_group(self, size: int) -> tuple[TaskWire, tuple[str, ...]]:
        """One task under `size` handles, each scored once (GRPO's group)."""
        ...

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        """Score a submission for a handle, once; a StreamError (not_found) for a handle
        already scored, expired or never issued."""

    def close(self) -> None:
        """Let go of the source (a stream's connection, a local source's kept truths)."""


class StreamSource:
    """Tasks from a stream's HTTP API (task mode), with a consumer token."""

    def __init__(self, url: str, token: str, batch: int = 1, **client_options: Any) -> None:
        from orchestrator.stream.client import StreamClient

        self.client = StreamClient(url, token, **client_options)
        self.batch = batch
        self._ready: list[TaskWire] = []

    @classmethod
    def from_token_file(cls, url: str, token_file: str | Path, **options: Any) -> StreamSource:
        """A source on the stream at `url`, with the consumer token kept in `token_file`."""
        return cls(url, Path(token_file).read_text().strip(), **options)

    def next_task(self) -> TaskWire:
        """The next task, pulled from the stream `batch` at a time."""
        if not self._ready:
            self._ready = self.client.pull_tasks(self.batch)[::-1]
        return self._ready.pop()

    def next_group(self, size: int) -> tuple[TaskWire, tuple[str, ...]]:
        """One task under `size` handles, pulled from the stream as a group."""
        if size == 1:
            task = self.next_task()
            return task, (task.handle,)
        [group] = self.client.pull_groups(1, size)
        return group.task, group.handles

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        """The stream's score of the submission under `handle` (StreamClient.score)."""
        return self.client.score(handle, submission)

    def close(self) -> None:
        """Close the connection to the stream."""
        self.client.close()


class LocalSource:
    """Train tasks generated in this process under a fresh random key."""

    def __init__(
        self,
        families: tuple[str, ...] = DEFAULT_FAMILIES,
        name: str = "local",
        key_file: str | Path | None = None,
    ) -> None:
        """A fresh random key, or with `key_file` the key an earlier LocalSource's
        `export_key` wrote (the same tasks again, in the same order: a sample fixed in
        advance, as a pre-registered evaluation needs)."""
        from orchestrator.stream.supply import TaskSupply

        unknown = [f for f in families if f not in FAMILIES]
        if unknown or not families:
            raise IntegrationError(
                f"unknown families {unknown}: accepted families are {', '.join(FAMILIES)}"
            )
        if key_file is not None:
            self._supply = TaskSupply(name, tuple(families), 0, 1, str(key_file), make_key=False)
            return
        with tempfile.TemporaryDirectory(prefix="causal-gym-local-") as folder:
            key_path = str(Path(folder) / "key")
            self._supply = TaskSupply(name, tuple(families), 0, 1, key_path)
            self._supply.remove_key_file(key_path)

    @property
    def key_fingerprint(self) -> str:
        """Which key this is (its fingerprint, not the key)."""
        return self._supply.fingerprint

    def export_key(self, path: str) -> str:
        """Write the key to a new 0600 file at an absolute path (to audit or reproduce
        what a run saw, as a stream's operator can); returns its fingerprint."""
        return self._supply.export_key(path)

    def next_task(self) -> TaskWire:
        """A fresh train task from the supply worker in this process."""
        made = self._supply.make()
        return TaskWire.model_validate(json.loads(made.line))

    def next_group(self, size: int) -> tuple[TaskWire, tuple[str, ...]]:
        """A fresh task under `size` handles, each scored once against the same kept truth."""
        task = self.next_task()
        return task, (task.handle, *self._supply.extend(task.handle, size - 1))

    def score(self, handle: str, submission: str | dict[str, Any]) -> StreamScore:
        """Score a submission for a handle, once, against the truth this process kept."""
        return self._supply.score(handle, submission)

    def close(self) -> None:
        """Forget every kept truth: no handle can be scored after."""
        self._supply.forget_all()
