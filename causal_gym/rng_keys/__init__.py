"""Keys (keys.py, standard library only) and keyed derivation of a task's random
streams (derive.py, numpy); names load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from causal_gym._lazy import lazy_exports

if TYPE_CHECKING:
    from causal_gym.rng_keys.derive import (
        STREAM_NAMES,
        TaskStreams,
        derive_block_rng,
        derive_plan_rng,
        derive_streams,
    )
    from causal_gym.rng_keys.keys import (
        DEFAULT_EVAL_KEY,
        KEY_ENV_VAR,
        DerivationKey,
        parse_key_hex,
        read_key_file,
        resolve_key,
    )

_KEYS = "causal_gym.rng_keys.keys"
_DERIVE = "causal_gym.rng_keys.derive"
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
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DEFAULT_EVAL_KEY": _KEYS,
        "KEY_ENV_VAR": _KEYS,
        "STREAM_NAMES": _DERIVE,
        "DerivationKey": _KEYS,
        "TaskStreams": _DERIVE,
        "derive_block_rng": _DERIVE,
        "derive_plan_rng": _DERIVE,
        "derive_streams": _DERIVE,
        "parse_key_hex": _KEYS,
        "read_key_file": _KEYS,
        "resolve_key": _KEYS,
    },
)
