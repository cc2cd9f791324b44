from __future__ import annotations

import pickle

import numpy as np
import pytest

from causal_gym.errors import KeyFormatError
from causal_gym.rng_keys import (
    DEFAULT_EVAL_KEY,
    KEY_ENV_VAR,
    STREAM_NAMES,
    derive_plan_rng,
    derive_streams,
    parse_key_hex,
    resolve_key,
)
from causal_gym.task_id import TaskId

KEY_A = "ab" * 32
KEY_B = "cd" * 16


def first_draws(gen: np.random.Generator) -> list[int]:
    return gen.integers(0, 2**62, size=4).tolist()


def test_precedence_env_over_configured_over_default() -> None:
    assert resolve_key(None, environ={}).is_default
    assert resolve_key(KEY_A, environ={}).raw == bytes.fromhex(KEY_A)
    assert resolve_key(KEY_A, environ={KEY_ENV_VAR: KEY_B}).raw == bytes.fromhex(KEY_B)
    # an empty env var is "unset", not an invalid key
    assert resolve_key(KEY_A, environ={KEY_ENV_VAR: "  "}).raw == bytes.fromhex(KEY_A)


@pytest.mark.parametrize("bad", ["xyz", "abc", "00" * 8, "0x" + "ab" * 16, "ab cd" * 8])
def test_invalid_keys_are_errors_never_fallbacks(bad: str) -> None:
    with pytest.raises(KeyFormatError) as info:
        resolve_key(None, environ={KEY_ENV_VAR: bad})
    assert KEY_ENV_VAR in str(info.value)
    assert bad.strip() not in str(info.value)
    with pytest.raises(KeyFormatError):
        resolve_key(bad, environ={})


def test_key_never_prints_or_pickles() -> None:
    key = parse_key_hex(KEY_A, "test")
    for text in (repr(key), str(key), f"{key}", f"{key!r}"):
        assert KEY_A not in text and "abab" not in text
        assert key.fingerprint in text
    with pytest.raises(TypeError):
        pickle.dumps(key)


def test_streams_are_deterministic_named_and_independent() -> None:
    key = parse_key_hex(KEY_A, "test")
    tid = TaskId.parse("train:ate:3")
    one, two = derive_streams(key, tid), derive_streams(key, tid)
    draws = {}
    for name in STREAM_NAMES:
        a, b = first_draws(getattr(one, name)), first_draws(getattr(two, name))
        assert a == b
        draws[name] = tuple(a)
    assert len(set(draws.values())) == len(STREAM_NAMES)


def test_attempt_counter_changes_every_stream_but_not_the_plan() -> None:
    key = parse_key_hex(KEY_A, "test")
    tid = TaskId.parse("eval-v1:null_detect:11")
    base, retry = derive_streams(key, tid, 0), derive_streams(key, tid, 1)
    for name in STREAM_NAMES:
        assert first_draws(getattr(base, name)) != first_draws(getattr(retry, name))
    assert first_draws(derive_plan_rng(key, tid)) == first_draws(derive_plan_rng(key, tid))


def test_keys_and_ids_separate_streams() -> None:
    a, b = parse_key_hex(KEY_A, "a"), parse_key_hex(KEY_B, "b")
    tid = TaskId.parse("train:ate:0")
    other = TaskId.parse("eval-v1:ate:0")
    seen = {tuple(first_draws(derive_streams(k, t).scm)) for k in (a, b) for t in (tid, other)}
    assert len(seen) == 4


def test_default_key_is_public_hex_constant() -> None:
    assert len(bytes.fromhex(DEFAULT_EVAL_KEY)) == 32
