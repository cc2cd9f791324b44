"""Which key a verifiers run uses, and which runtimes may hold a secret one.

`env_key` in the task config *names an environment variable*; it never holds key
material, because verifiers writes every config field to
`configs/resolved/eval.json`. Precedence: CAUSAL_GYM_KEY > the variable named by
env_key > DEFAULT_EVAL_KEY.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from causal_gym.errors import KeyFormatError
from causal_gym.rng_keys.keys import KEY_ENV_VAR, DerivationKey, resolve_key

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOOKS_LIKE_KEY = re.compile(r"[0-9a-fA-F]{24,}")

#: Runtimes that share the host's filesystem or process table with the agent: a
#: secret key in the host environment would be readable from /proc/*/environ.
NON_ISOLATING_RUNTIMES = frozenset({"subprocess", "apptainer"})


def check_env_key_name(env_key: str | None) -> str | None:
    """Validate the config value: an environment variable name, not a key."""
    if env_key is None or env_key == "":
        return None
    if _LOOKS_LIKE_KEY.fullmatch(env_key):
        raise KeyFormatError(
            "env_key must name an environment variable holding the hex key, not hold the "
            "key itself (resolved configs are written to disk): export it, e.g. "
            "MY_EVAL_KEY=..., and pass --env.taskset.task.env-key MY_EVAL_KEY"
        )
    if not _ENV_NAME.fullmatch(env_key):
        raise KeyFormatError(
            f"env_key {env_key!r} is not an environment variable name "
            "(letters, digits and underscores, not starting with a digit)"
        )
    return env_key


def resolve_run_key(env_key: str | None, environ: Mapping[str, str] | None = None) -> DerivationKey:
    env = os.environ if environ is None else environ
    name = check_env_key_name(env_key)
    configured = None
    if name is not None:
        if name not in env and not env.get(KEY_ENV_VAR, "").strip():
            raise KeyFormatError(f"env_key names the environment variable {name}, which is not set")
        configured = env.get(name)
    return resolve_key(configured, env, configured_source=f"environment variable {name}")


def refuse_unsafe_runtime(runtime_type: str, key: DerivationKey) -> None:
    """A secret key may only meet runtimes that isolate the agent from the host."""
    if key.is_default or runtime_type not in NON_ISOLATING_RUNTIMES:
        return
    raise KeyFormatError(
        f"a secret causal-gym key is in effect (fingerprint {key.fingerprint}) and the "
        f"{runtime_type} runtime cannot hide it from the agent (host environment and "
        "/proc are visible): use --env.agent.runtime.type docker, or unset the key "
        "to run the public splits with DEFAULT_EVAL_KEY"
    )
