"""Shared fixtures: keys and a small cache of generated tasks (generation is pure)."""

from __future__ import annotations

from functools import cache

import pytest

from causal_gym import Task, generate_task, resolve_key
from causal_gym.rng_keys import DerivationKey, parse_key_hex

OTHER_KEY_HEX = "5e" * 32


@pytest.fixture(scope="session")
def default_key() -> DerivationKey:
    return resolve_key(environ={})


@pytest.fixture(scope="session")
def other_key() -> DerivationKey:
    return parse_key_hex(OTHER_KEY_HEX, "test")


@cache
def cached_task(task_id: str) -> Task:
    return generate_task(task_id, resolve_key(environ={}))


FAMILIES = ("ate", "adjustment", "null_detect")
