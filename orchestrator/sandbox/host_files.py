"""File operations the host performs inside a directory an agent controls.

The host runs with more privilege than the agent (as root it runs as root), and the
agent can prepare anything in its workspace between two tool calls: symlinks to host
files, FIFOs, devices, directories where a file is expected, trees thousands of levels
deep. So every operation here walks the path one component at a time through
directory file descriptors opened with O_NOFOLLOW (no symlink is ever followed, and a
component swapped during the walk is refused, not raced), opens files non-blocking and
checks their type on the open descriptor before reading, bounds every read in bytes,
and replaces files by renaming a fresh, randomly named file over them.

Standard library only: the Docker backend runs this same file inside the container
(`python host_files.py read|write ROOT PATH ...`, as the agent's uid), so both
backends refuse exactly the same things.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


class FileRefused(Exception):
    """Raised for a path the host will not read or write; the message says why."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def _parent_dir(
    root: Path, parts: list[str], create: bool, owner: tuple[int, int] | None
) -> Iterator[int]:
    """A descriptor of the directory holding `parts[-1]`, reached without following
    any symlink; missing directories are made (owned by `owner`) when `create`."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in parts[:-1]:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                if owner is not None:
                    os.fchown(child, *owner)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _refusal(path: str, exc: OSError, action: str) -> FileRefused:
    reasons = {
        errno.ELOOP: "a symlink is in the way",
        errno.ENOTDIR: "a path component is not a directory (or is a symlink)",
        errno.ENOENT: "not found",
        errno.EISDIR: "it is a directory",
        errno.ENOSPC: "the sandbox's disk is full",
    }
    reason = reasons.get(exc.errno or 0, exc.strerror or type(exc).__name__)
    return FileRefused(f"cannot {action} {path!r}: {reason}")


def read_regular(root: Path, rel: str, max_bytes: int) -> bytes:
    """At most `max_bytes` of a regular file; anything else is refused unread."""
    parts = rel.split("/")
    try:
        with _parent_dir(root, parts, create=False, owner=None) as parent:
            fd = os.open(parts[-1], _READ_FLAGS, dir_fd=parent)
    except OSError as exc:
        raise _refusal(rel, exc, "read") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileRefused(f"cannot read {rel!r}: not a regular file")
        chunks, left = [], max_bytes
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_atomic(root: Path, rel: str, data: bytes, owner: tuple[int, int] | None) -> None:
    """Create or replace a regular file: write a new randomly named file, then rename
    it over the target (a symlink or FIFO there is replaced, never followed)."""
    parts = rel.split("/")
    try:
        with _parent_dir(root, parts, create=True, owner=owner) as parent:
            temp = f".causal-gym-{secrets.token_hex(8)}"
            fd = os.open(temp, _CREATE_FLAGS, 0o644, dir_fd=parent)
            try:
                with os.fdopen(fd, "wb", closefd=False) as handle:
                    handle.write(data)
                os.fchmod(fd, 0o644)
                if owner is not None:
                    os.fchown(fd, *owner)
            finally:
                os.close(fd)
            try:
                os.rename(temp, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
    except OSError as exc:
        raise _refusal(rel, exc, "write") from exc


def remove_tree(path: Path) -> None:
    """Remove a directory tree of any depth without following symlinks.

    `rm -rf` walks iteratively (fts), so a tree 100,000 levels deep is fine where
    `shutil.rmtree` recurses and overflows. If a pass leaves something behind (a
    directory the agent made unreadable, when not root), permissions are opened up
    without following symlinks and it runs once more.
    """
    if not os.path.lexists(path):
        return
    rm = shutil.which("rm") or "/bin/rm"
    for attempt in range(2):
        subprocess.run([rm, "-rf", "--one-file-system", "--", str(path)], capture_output=True)
        if not os.path.lexists(path):
            return
        if attempt == 0:
            subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True)
    raise OSError(f"could not remove {path}")


def main(argv: list[str]) -> int:
    """`read ROOT PATH MAX_BYTES` (bytes to stdout) or `write ROOT PATH` (stdin)."""
    try:
        if len(argv) == 4 and argv[0] == "read":
            sys.stdout.buffer.write(read_regular(Path(argv[1]), argv[2], int(argv[3])))
            return 0
        if len(argv) == 3 and argv[0] == "write":
            write_atomic(Path(argv[1]), argv[2], sys.stdin.buffer.read(), owner=None)
            return 0
    except FileRefused as exc:
        print(exc, file=sys.stderr)
        return 3
    print("usage: host_files.py read ROOT PATH MAX_BYTES | write ROOT PATH", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
