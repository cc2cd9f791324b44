"""Where episode mode's endpoint API key may come from: a value, or a file in the one
folder named when the stream started.

An operator route names the file (`api_key_file`) and a URL (`base_url`), and the
stream sends what it reads as `Authorization: Bearer ...` to that URL: when any path on
the head was accepted, pointing it at the stream's exported key and at Ray's auth token
sent both to a listener. So `api_key_file` is a bare name in the endpoint-secrets
folder (`stream start --endpoint-secrets DIR`, default the stream's state folder),
opened once at start without following links and kept open, and the file must be:

- a plain name (letters, digits, '.', '_', '-', not starting with '.'), not one of the
  stream's own files (operator.token, stream.json, audit.jsonl, serve.log);
- opened relative to the folder with O_NOFOLLOW (a symlink is refused, not followed);
- a regular file owned by the stream's user with a single link (a hard link could name
  anything), of at most 4 KiB, one line of UTF-8;
- not Ray's auth token (by file or by content), not a stream token (`cgs_...`), not a
  key whose fingerprint is the stream's.

The folder: a directory (not a symlink) owned by the stream's user, writable by no one
else (or others could plant files), and not Ray's folder (~/.ray).
"""

from __future__ import annotations

import errno
import hmac
import os
import re
import stat
from pathlib import Path

from causal_gym.rng_keys.keys import DerivationKey
from orchestrator.errors import StreamError

MAX_KEY_FILE_BYTES = 4096
KEY_FILE_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")
STREAM_FILES = frozenset({"operator.token", "stream.json", "audit.jsonl", "serve.log"})
_HEX_KEY = re.compile(r"(?:[0-9a-fA-F]{2}){16,}")


def ray_token_paths() -> list[Path]:
    """Where Ray 2.60 looks for its cluster token (its default and the override)."""
    paths = [Path.home() / ".ray" / "auth_token"]
    if os.environ.get("RAY_AUTH_TOKEN_PATH"):
        paths.append(Path(os.environ["RAY_AUTH_TOKEN_PATH"]))
    return paths


def check_secrets_folder(folder: Path) -> None:
    """A StreamError (one line) unless `folder` may hold endpoint keys."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise StreamError(f"endpoint-secrets folder {folder}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StreamError(f"endpoint-secrets folder {folder} is not a directory (or a symlink)")
    if info.st_uid != os.geteuid():
        raise StreamError(f"endpoint-secrets folder {folder} is not owned by this user")
    if info.st_mode & 0o022:
        raise StreamError(f"endpoint-secrets folder {folder} is writable by others: chmod go-w it")
    real = folder.resolve()
    if any(real == p.parent.resolve() for p in ray_token_paths()):
        raise StreamError(f"endpoint-secrets folder {folder} is Ray's: name another folder")


class EndpointSecrets:
    """The endpoint-secrets folder, held open from the stream's start."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        check_secrets_folder(folder)
        self.folder, self._fingerprint = folder, fingerprint
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        self._fd: int | None = os.open(folder, flags)

    def _refuse(self, name: str, why: str) -> StreamError:
        return StreamError(f"api_key_file {name[:80]!r} {why}")

    def read(self, name: str) -> str:
        """The API key in file `name` of the folder, or a one-line StreamError."""
        if not KEY_FILE_NAME.match(name):
            raise self._refuse(
                name,
                f"is not a plain file name in the endpoint-secrets folder {self.folder} "
                "(letters, digits, '.', '_', '-'; no path)",
            )
        if name in STREAM_FILES:
            raise self._refuse(name, "is one of the stream's own files")
        if self._fd is None:
            raise StreamError("the stream is stopping", "unavailable")
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=self._fd)
        except OSError as exc:
            why = "is a symlink" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
            raise self._refuse(
                name, f"in {self.folder}: {why} (a regular file is accepted)"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            self._check_file(name, info)
            raw = handle.read(MAX_KEY_FILE_BYTES + 1)
        if len(raw) > MAX_KEY_FILE_BYTES:
            raise self._refuse(name, f"is over {MAX_KEY_FILE_BYTES} bytes")
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise self._refuse(name, "is not UTF-8 text") from None
        self._check_content(name, text, info)
        return text

    def _check_file(self, name: str, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise self._refuse(name, "is not a regular file")
        if info.st_uid != os.geteuid():
            raise self._refuse(name, "is not owned by the stream's user")
        if info.st_nlink != 1:
            raise self._refuse(name, "has other hard links: copy the key into a file of its own")
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise self._refuse(name, f"is over {MAX_KEY_FILE_BYTES} bytes")

    def _check_content(self, name: str, text: str, info: os.stat_result) -> None:
        if not text or "\n" in text or "\r" in text:
            raise self._refuse(name, "must hold the key on one line")
        if text.startswith("cgs_"):
            raise self._refuse(name, "holds a stream token, not an endpoint key")
        as_key = DerivationKey(bytes.fromhex(text), name) if _HEX_KEY.fullmatch(text) else None
        if as_key is not None and as_key.fingerprint == self._fingerprint:
            raise self._refuse(name, "holds the stream's key")
        if self._is_ray_token(text, info):
            raise self._refuse(name, "holds Ray's auth token")

    @staticmethod
    def _is_ray_token(text: str, info: os.stat_result) -> bool:
        tokens = [os.environ.get("RAY_AUTH_TOKEN", "").strip()]
        for path in ray_token_paths():
            try:
                other = os.stat(path)
                if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                    return True
                tokens.append(path.read_bytes()[: 2 * MAX_KEY_FILE_BYTES].decode().strip())
            except (OSError, UnicodeDecodeError):
                continue
        return any(t and hmac.compare_digest(t.encode(), text.encode()) for t in tokens)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
