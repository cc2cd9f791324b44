"""Keyed derivation of a task's random streams (see derive.py)."""

from causal_gym.rng_keys.derive import (
    DEFAULT_EVAL_KEY,
    KEY_ENV_VAR,
    STREAM_NAMES,
    DerivationKey,
    TaskStreams,
    derive_block_rng,
    derive_plan_rng,
    derive_streams,
    parse_key_hex,
    read_key_file,
    resolve_key,
)

__all__ = [
    "DEFAULT_EVAL_KEY",
    "KEY_ENV_VAR",
    "STREAM_NAMES",
    "DerivationKey",
    "TaskStreams",
    "derive_block_rng",
    "derive_plan_rng",
    "derive_streams",
    "parse_key_hex",
    "read_key_file",
    "resolve_key",
]
