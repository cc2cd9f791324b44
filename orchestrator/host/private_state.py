"""The runner's private state folder: one per user, the only place where what a runner
leaves for a later one (Ray markers, key copies, sandbox roots, the records' head
secret and chain anchors) is written.

Why a folder of its own: a head may be a machine other people log in to, and what runs
as root there must trust nothing in a world-writable place. A marker in /tmp was
anybody's to write (and root's reaper killed what it named); a sandbox root in /tmp was
anybody's to pre-create (and root mounted where a symlink in it pointed). Here:

- the folder is `CAUSAL_GYM_STATE_DIR`, else `$XDG_STATE_HOME/causal-gym`, else
  `~/.local/state/causal-gym` (persistent, so a run's records can be checked after a
  reboot: their MAC key derives from a secret kept here);
- every folder on the way to it (its real path) is owned by root or the caller and is
  not writable by others unless sticky (so nobody else can rename or replace it: the
  rule OpenSSH applies to its key files);
- the folder itself and every folder made under it are created 0700 without following
  links (`mkdir` and `open(O_NOFOLLOW | O_DIRECTORY)` relative to the parent's
  descriptor), and refused when they are a symlink, owned by someone else or
  writable by group or others.

Once `state_root` has returned, nobody but the caller (and root) can change anything
below it, so plain paths under it are safe to use.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from orchestrator.errors import StateFolderError

STATE_ENV_VAR = "CAUSAL_GYM_STATE_DIR"
FOLDER_MODE = 0o700
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def configured_root() -> Path:
    """Where the state folder is (not checked yet)."""
    named = os.environ.get(STATE_ENV_VAR)
    if named:
        return Path(named).expanduser().absolute()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).absolute() if xdg else Path.home() / ".local" / "state"
    return base / "causal-gym"


def _safe_ancestor(path: str, info: os.stat_result, uid: int) -> None:
    """An ancestor nobody else can replace: owned by root or us, and writable by
    group or others only when sticky (/tmp)."""
    if info.st_uid not in (0, uid):
        raise StateFolderError(
            f"the state folder's parent {path} belongs to uid {info.st_uid}: set "
            f"{STATE_ENV_VAR} to a folder on a path only you and root control"
        )
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise StateFolderError(
            f"the state folder's parent {path} is writable by others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): set {STATE_ENV_VAR} to a folder on a "
            "path only you and root control"
        )


def check_private(path: str, info: os.stat_result, uid: int | None = None) -> None:
    """A folder of ours: a real directory (not a link), owned by the caller, writable by
    nobody else.

    (A folder of ours with read bits for others is tightened by the caller; one others
    could write to may hold what they planted.)"""
    uid = os.geteuid() if uid is None else uid
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StateFolderError(f"{path} is not a directory (a symlink?): refused")
    if info.st_uid != uid:
        raise StateFolderError(
            f"{path} belongs to uid {info.st_uid}, not to this user ({uid}): refused "
            "(someone else made it; remove it or choose another place)"
        )
    if info.st_mode & 0o022:
        raise StateFolderError(
            f"{path} is writable by others (mode {stat.S_IMODE(info.st_mode):o}): "
            "refused (remove it; it is made again 0700)"
        )


def open_private_dir(parent_fd: int, name: str, where: str) -> int:
    """Make (0700) or open the folder `name` under `parent_fd` without following a
    link, check it is ours and private, and return its descriptor (the caller closes
    it). `where` is its path, for messages."""
    if not name or "/" in name or name in (".", ".."):
        raise StateFolderError(f"{name!r} is not a folder name")
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, FOLDER_MODE, dir_fd=parent_fd)
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent_fd)
    except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file
        raise StateFolderError(f"cannot open {where}: {exc.strerror or exc} (a symlink?)") from exc
    try:
        check_private(where, os.fstat(fd))
        if stat.S_IMODE(os.fstat(fd).st_mode) != FOLDER_MODE:
            os.fchmod(fd, FOLDER_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_safe_path(real: Path, uid: int) -> int:
    """A descriptor of `real`, opened from / one folder at a time without following a
    link, each folder on the way checked by `_safe_ancestor` (the caller closes it)."""
    fd = os.open("/", _DIRECTORY)
    current = Path("/")
    try:
        _safe_ancestor(str(current), os.fstat(fd), uid)
        for part in real.parts[1:]:
            current = current / part
            try:
                child = os.open(part, _DIRECTORY, dir_fd=fd)
            except OSError as exc:
                raise StateFolderError(f"cannot open {current}: {exc.strerror or exc}") from exc
            os.close(fd)
            fd = child
            _safe_ancestor(str(current), os.fstat(fd), uid)
    except BaseException:
        os.close(fd)
        raise
    return fd


def state_root() -> Path:
    """The checked state folder (made on first use); a StateFolderError otherwise."""
    root = configured_root()
    uid = os.geteuid()
    try:
        root.parent.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    except OSError as exc:
        raise StateFolderError(f"cannot make {root.parent}: {exc.strerror or exc}") from exc
    real_parent = Path(os.path.realpath(root.parent))
    parent_fd = _open_safe_path(real_parent, uid)
    try:
        os.close(open_private_dir(parent_fd, root.name, str(real_parent / root.name)))
    finally:
        os.close(parent_fd)
    return real_parent / root.name


def state_folder(*names: str) -> Path:
    """A private folder under the state root (each level made 0700 and checked)."""
    root = state_root()
    fd = os.open(root, _DIRECTORY)
    path = root
    try:
        for name in names:
            path = path / name
            child = open_private_dir(fd, name, str(path))
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return path
