"""Keyed derivation: task id + key -> independent, named random streams.

Why HMAC and not `seed = index`: with sequential seeds anyone who can run the
generator can look answers up. Keying the derivation means a private key turns the
same public ids into unguessable tasks, while the public `DEFAULT_EVAL_KEY` keeps the
frozen eval-v1 split reproducible on any machine.

Why separate streams: the SCM, the sampled data, the messiness, the naming and the
prompt wording draw from their own generators, so changing how many numbers one
stage consumes never shifts another stage's draws.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from causal_gym.errors import KeyFormatError
from causal_gym.task_id import TaskId

#: Public reproducibility key for the frozen splits. Not a secret by design.
DEFAULT_EVAL_KEY = "8d061ed1e9cc86988c5664b1b2001666f47a58d68b8d60b82161a1d1806ffeb9"
KEY_ENV_VAR = "CAUSAL_GYM_KEY"
STREAM_NAMES: tuple[str, ...] = ("scm", "data", "messiness", "naming", "prompt")
MIN_KEY_BYTES = 16
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
KEY_FORMAT_HINT = (
    f"expected an even-length hex string of at least {2 * MIN_KEY_BYTES} hex digits "
    "(e.g. from `openssl rand -hex 32`)"
)


class DerivationKey:
    """A key that never prints itself: repr, str and format show a fingerprint only."""

    __slots__ = ("_raw", "source")

    def __init__(self, raw: bytes, source: str) -> None:
        if len(raw) < MIN_KEY_BYTES:
            raise KeyFormatError(f"key from {source} is too short: {KEY_FORMAT_HINT}")
        self._raw = raw
        self.source = source

    @property
    def raw(self) -> bytes:
        return self._raw

    @property
    def fingerprint(self) -> str:
        """Short public digest so runs can say which key they used without leaking it."""
        return hashlib.sha256(b"causal-gym key fingerprint" + self._raw).hexdigest()[:12]

    @property
    def is_default(self) -> bool:
        return hmac.compare_digest(self._raw, bytes.fromhex(DEFAULT_EVAL_KEY))

    def __repr__(self) -> str:
        return f"DerivationKey(fingerprint={self.fingerprint}, source={self.source})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("DerivationKey must not be pickled: keys never cross process boundaries")


def parse_key_hex(text: str, source: str) -> DerivationKey:
    """Parse hex from `source` (named in errors, the value never is)."""
    cleaned = text.strip()
    if not _HEX.fullmatch(cleaned):
        raise KeyFormatError(f"key from {source} is not valid hex: {KEY_FORMAT_HINT}")
    return DerivationKey(bytes.fromhex(cleaned), source)


def read_key_file(path: Path) -> str:
    """Read a key file's hex text; missing or unreadable files are a key error."""
    try:
        return path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFormatError(f"cannot read key file {path}: {exc.__class__.__name__}") from exc


def resolve_key(
    configured_hex: str | None = None,
    environ: Mapping[str, str] | None = None,
    configured_source: str = "configuration",
) -> DerivationKey:
    """Key precedence: env CAUSAL_GYM_KEY > configured key > DEFAULT_EVAL_KEY.

    An invalid key at any level is an error, never a silent fall-through to the next.
    """
    env = os.environ if environ is None else environ
    from_env = env.get(KEY_ENV_VAR)
    if from_env is not None and from_env.strip():
        return parse_key_hex(from_env, f"environment variable {KEY_ENV_VAR}")
    if configured_hex is not None:
        return parse_key_hex(configured_hex, configured_source)
    return parse_key_hex(DEFAULT_EVAL_KEY, "DEFAULT_EVAL_KEY")


def _mac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def generator_from_digest(digest: bytes) -> np.random.Generator:
    """A PCG64 generator seeded with all 256 bits of a digest."""
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest, "big")))


@dataclass(frozen=True)
class TaskStreams:
    """The five generators of one generation attempt of one task."""

    scm: np.random.Generator
    data: np.random.Generator
    messiness: np.random.Generator
    naming: np.random.Generator
    prompt: np.random.Generator


def task_root(key: DerivationKey, task_id: TaskId) -> bytes:
    return _mac(key.raw, str(task_id))


def derive_streams(key: DerivationKey, task_id: TaskId, attempt: int = 0) -> TaskStreams:
    """Streams for one candidate; attempt > 0 folds the counter into every stream."""
    if attempt < 0:
        raise ValueError(f"attempt must be >= 0, got {attempt}")
    root = task_root(key, task_id)
    suffix = "" if attempt == 0 else f"/attempt-{attempt}"
    gens = {name: generator_from_digest(_mac(root, name + suffix)) for name in STREAM_NAMES}
    return TaskStreams(**gens)


def derive_plan_rng(key: DerivationKey, task_id: TaskId) -> np.random.Generator:
    """Attempt-independent stream for the task's tier and row count.

    A rejected candidate is redrawn, but the task keeps its tier and size, so the
    eval-v1 manifest's tier and row count stay true whatever attempt succeeds.
    """
    return generator_from_digest(_mac(task_root(key, task_id), "plan"))


def derive_block_rng(key: DerivationKey, namespace: str, block: int) -> np.random.Generator:
    """Stream that orders the effect classes inside one 20-task null_detect block.

    The message has four colon-separated parts, so it can never equal a task id.
    """
    return generator_from_digest(_mac(key.raw, f"{namespace}:null_detect:block:{block}"))
