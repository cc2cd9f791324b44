"""Files only their owner reads: folders made 0700, files created 0600 without
following a link, written whole atomically or appended line by line durably.

A run's results give the truth away (an estimate and its absolute error pin it to two
values), a stream's state and audit log name its consumers, and a user's policy runs
under another uid on the same machine: everything the runner writes goes through
here, so no file of it is ever readable by others, even for a moment, and none is
written through a symlink someone planted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

#: Modes of everything a runner writes: only the operator reads it.
FOLDER_MODE, FILE_MODE = 0o700, 0o600


def private_folder(path: Path) -> Path:
    """`path` as a directory only its owner can enter (made 0700, or made so)."""
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    os.chmod(path, FOLDER_MODE)
    return path


def private_file(path: Path, mode: str = "w") -> IO[Any]:
    """A new or truncated file (mode "w"/"wb") or one to append to ("a"), created
    0600; a symlink at `path` is refused, not followed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_APPEND if mode.startswith("a") else os.O_TRUNC
    fd = os.open(path, flags, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


def write_atomically(path: Path, text: str | bytes) -> None:
    """`text` at `path` whole or not at all: written 0600 beside it, fsynced, renamed
    over it (a reader never sees half a file)."""
    temp = path.with_name(f".{path.name}.partial")
    with private_file(temp, "wb") as handle:
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


class DurableLog:
    """An append-only JSON-lines file: each line is flushed and fsynced before
    `append` returns, so a line the caller has been told about survives a crash."""

    def __init__(self, path: Path, sync: bool = True) -> None:
        self.path = path
        self.sync = sync
        self._handle: IO[str] = private_file(path, "a")
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        """A crash mid-write can leave a last line without its newline; end it, so the
        next record starts on a line of its own (readers skip the torn one)."""
        if self.path.stat().st_size == 0:
            return
        with open(self.path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                self._handle.write("\n")
                self._handle.flush()

    def append(self, line: str) -> None:
        self._handle.write(line.rstrip("\n") + "\n")
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.append(line)

    def close(self) -> None:
        self._handle.close()


def save_figure(figure: Any, path: Path) -> None:
    """A matplotlib figure as a PNG written like every other run file (0600, atomic)."""
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    write_atomically(path, buffer.getvalue())


def dump_json(path: Path, payload: Any) -> None:
    """`payload` as indented, key-sorted JSON, written atomically."""
    write_atomically(path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
