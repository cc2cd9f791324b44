"""The key on the head: read once, kept in a 0600 file, never in an environment.

Ray hands the driver's environment to every worker it starts, and a process's initial
environment stays readable in /proc/<pid>/environ even after `os.environ` forgets a
variable. So the runner moves the key out of its environment before anything else:
`take_key_from_environment` writes CAUSAL_GYM_KEY into a fresh 0600 file in a 0700
directory and re-executes the process without it (the console script calls it first
thing). Head actors receive the file's path, never the key; the file is removed when
the run ends. Key folders live in the caller's private state folder (private_state.py,
`keys/`), never in a world-writable place where another user could plant or race one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from causal_gym.rng_keys.keys import KEY_ENV_VAR, DerivationKey, parse_key_hex, read_key_file
from orchestrator.host.owners import owner_alive, owner_token
from orchestrator.host.private_state import state_folder

#: Names the 0600 file a re-executed runner takes its key from.
KEY_FILE_ENV_VAR = "CAUSAL_GYM_KEY_FILE_FROM_ENV"


KEY_FOLDER_PREFIX = "causal-gym-key-"


def key_folders() -> Path:
    """The private folder that holds the key folders (state folder, `keys/`)."""
    return state_folder("keys")


def _key_folder() -> Path:
    """A fresh 0700 directory named after its owner, after removing those of dead
    runners: a runner killed with SIGKILL cannot remove its own key file."""
    reap_key_folders()
    prefix = f"{KEY_FOLDER_PREFIX}{owner_token()}-"
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=key_folders()))
    os.chmod(folder, 0o700)
    return folder


def reap_key_folders() -> list[Path]:
    """Remove the key folders whose owner process is gone; returns what was removed."""
    removed = []
    for folder in key_folders().glob(f"{KEY_FOLDER_PREFIX}*"):
        token = folder.name[len(KEY_FOLDER_PREFIX) :].rpartition("-")[0]
        if folder.is_dir() and not folder.is_symlink() and not owner_alive(token):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def write_key_file(key: DerivationKey) -> Path:
    """A private copy of the key for head actors: 0600 in a fresh 0700 directory."""
    return write_key_to(_key_folder() / "key", key)


def write_key_to(path: Path, key: DerivationKey) -> Path:
    """The key's hex in a new 0600 file (an existing file is never overwritten)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key.raw.hex())
    return path


def remove_key_file(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
    shutil.rmtree(path.parent, ignore_errors=True)


def load_key_file(path: str | Path, source: str = "the head key file") -> DerivationKey:
    return parse_key_hex(read_key_file(Path(path)), source)


def take_key_from_environment(argv: list[str] | None = None) -> None:
    """If CAUSAL_GYM_KEY is set, move it to a 0600 file and re-exec without it.

    Validation of the key is left to the command (it reports a bad key the usual
    way); this only makes sure the value leaves the environment.
    """
    value = os.environ.get(KEY_ENV_VAR)
    if value is None:
        return
    path = _key_folder() / "key"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV_VAR}
    env[KEY_FILE_ENV_VAR] = str(path)
    command = argv if argv is not None else list(sys.orig_argv)
    os.execve(sys.executable, [sys.executable, *command[1:]], env)


def key_from_moved_file() -> str | None:
    """The key text a re-executed runner was handed (its file is removed once read),
    so the rest of the program resolves it exactly as it would the variable."""
    name = os.environ.pop(KEY_FILE_ENV_VAR, None)
    if name is None:
        return None
    path = Path(name)
    try:
        return path.read_text()
    finally:
        remove_key_file(path)
