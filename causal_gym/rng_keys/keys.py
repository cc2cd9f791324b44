"""Derivation keys: parsing, precedence and a type that never prints itself.

Standard library only, so the CLIs can name the key's sources in `--help` without
loading numpy, and so the one module that touches key bytes is small enough to audit.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping
from pathlib import Path

from causal_gym.errors import KeyFormatError

#: Public reproducibility key for the frozen splits. Not a secret by design.
DEFAULT_EVAL_KEY = "8d061ed1e9cc86988c5664b1b2001666f47a58d68b8d60b82161a1d1806ffeb9"
KEY_ENV_VAR = "CAUSAL_GYM_KEY"
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
        """The key's bytes, for derive.py's MACs and for the secret values a child
        process must not see; never print them."""
        return self._raw

    @property
    def fingerprint(self) -> str:
        """Short public digest so runs can say which key they used without leaking it."""
        return hashlib.sha256(b"causal-gym key fingerprint" + self._raw).hexdigest()[:12]

    @property
    def is_default(self) -> bool:
        """Whether this is the public DEFAULT_EVAL_KEY (compared in constant time): only
        another key is a secret to keep from agents."""
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
