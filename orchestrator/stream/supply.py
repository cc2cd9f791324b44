"""The stream's task supply: the only processes that hold its key and its truths.

A stream runs `workers` of these, each a Ray actor pinned to the head (a plain class
here, wrapped in server.py). Each generates its own slice of the stream's train ids
(worker w of W takes ids w, w + W, ...: disjoint, so no task is handed out twice),
keeps the sealed truth of every task it made under the task's handle, and scores a
handle against that truth: a task is generated once, and scoring never re-derives it.
The HTTP front holds handles and public tasks only; it asks a worker to `forget`
handles that expired, so what a worker keeps is bounded by the stream's limits.

The key: worker 0 makes it (32 random bytes) and writes it to a new 0600 file in a
0700 directory the others read it from; the file is removed as soon as all have read
it. It is never an argument, a return value or a log line; `export_key` writes it to
a new file on the head, for the operator only.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import EpisodeScore
from causal_gym.scoring.reward import score_submission
from causal_gym.scoring.validate import Accepted, Rejected, validate_submission
from causal_gym.task import HiddenTruth
from causal_gym.versions import task_reward_version
from orchestrator.errors import StreamError
from orchestrator.run.head_key import load_key_file, write_key_to
from orchestrator.stream.types import Made, StreamScore, score_components


@dataclass(frozen=True)
class _Kept:
    truth: HiddenTruth
    columns: tuple[str, ...]


def stream_ids(families: tuple[str, ...], worker: int, workers: int) -> Iterator[str]:
    """Worker `worker`'s share of the stream's ids: every `workers`-th of the cycle
    train:<family>:0 for each family, train:<family>:1, ..."""
    ids = (f"train:{f}:{i}" for i in itertools.count() for f in families)
    return itertools.islice(ids, worker, None, workers)


class TaskSupply:
    def __init__(
        self,
        name: str,
        families: tuple[str, ...],
        worker: int,
        workers: int,
        key_path: str,
        make_key: bool | None = None,
    ) -> None:
        """`make_key` (default: worker 0 does) writes a fresh key to `key_path`
        before reading it; without it the key already there is read."""
        path = Path(key_path)
        if worker == 0 if make_key is None else make_key:
            write_key_to(path, DerivationKey(secrets.token_bytes(32), f"stream {name}"))
        self._key = load_key_file(path, f"stream {name}")
        self.worker = worker
        self._ids = stream_ids(families, worker, workers)
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}

    @property
    def fingerprint(self) -> str:
        return self._key.fingerprint

    def ready(self) -> str:
        """The key's fingerprint (the front checks that every worker holds one key)."""
        return self._key.fingerprint

    def make(self) -> Made:
        """Generate the next task of this worker's share; keep its truth under a new
        handle and return its public part."""
        from causal_gym.make import generate_task

        with self._lock:
            task_id = next(self._ids)
        task = generate_task(task_id, self._key)
        handle = f"{self.worker:02d}{secrets.token_urlsafe(16)}"
        with self._lock:
            self._kept[handle] = _Kept(task.hidden, task.public.columns)
        return Made(handle, task.public.to_wire(handle).model_dump_json().encode())

    def extend(self, handle: str, count: int) -> tuple[str, ...]:
        """`count` more handles for the task under `handle` (a group pull): each is
        scored once, against the same kept truth."""
        with self._lock:
            kept = self._kept.get(handle)
            if kept is None:
                raise StreamError("unknown handle: already scored or expired", "not_found")
            more = tuple(f"{self.worker:02d}{secrets.token_urlsafe(16)}" for _ in range(count))
            for extra in more:
                self._kept[extra] = kept
        return more

    def score(self, handle: str, submission: Any) -> StreamScore:
        """Score one submission for a handle this worker made, once."""
        with self._lock:
            kept = self._kept.pop(handle, None)
        if kept is None:
            raise StreamError(
                "unknown handle: not issued to this consumer, already scored, or expired",
                "not_found",
            )
        checked = validate_submission(
            kept.truth.family, submission, kept.columns, tuple(kept.truth.estimands)
        )
        record = (
            score_submission(kept.truth, checked.submission)
            if isinstance(checked, Accepted)
            else None
        )
        score = EpisodeScore(record, task_reward_version(kept.truth.task_id))
        errors = checked.errors if isinstance(checked, Rejected) else ()
        return StreamScore(
            valid=score.submitted,
            errors=tuple(errors),
            reward=score.reward,
            clipped_reward=score.clipped_reward,
            reward_version=score.reward_version,
            family=kept.truth.family.value,
            **score_components(score.fields()),
        )

    def forget(self, handles: list[str]) -> int:
        with self._lock:
            return sum(self._kept.pop(h, None) is not None for h in handles)

    def forget_all(self) -> int:
        """Drop every kept truth (a LocalSource closing)."""
        with self._lock:
            count = len(self._kept)
            self._kept.clear()
            return count

    def outstanding(self) -> int:
        with self._lock:
            return len(self._kept)

    def remove_key_file(self, key_path: str) -> None:
        """Worker 0, once every worker has read it."""
        if self.worker == 0:
            path = Path(key_path)
            path.unlink(missing_ok=True)

    def export_key(self, path: str) -> str:
        """Write the key to a new 0600 file at an absolute path on the head."""
        target = Path(path)
        if not target.is_absolute():
            raise StreamError(
                f"export-key writes to an absolute path on the head, not {path[:200]!r}"
            )
        try:
            write_key_to(target, self._key)
        except FileExistsError:
            raise StreamError(
                f"{path} exists: export-key writes a new file only", "conflict"
            ) from None
        except OSError as exc:
            raise StreamError(f"cannot write {path}: {exc.strerror or exc}") from None
        return self._key.fingerprint
