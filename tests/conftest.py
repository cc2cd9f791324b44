"""Shared fixtures: keys and a small cache of generated tasks (generation is pure)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from causal_gym import Task, generate_task, resolve_key
from causal_gym.rng_keys import DerivationKey, parse_key_hex
from orchestrator.host.private_state import STATE_ENV_VAR

OTHER_KEY_HEX = "5e" * 32


@pytest.fixture(scope="session")
def default_key() -> DerivationKey:
    return resolve_key(environ={})


@pytest.fixture(scope="session")
def other_key() -> DerivationKey:
    return parse_key_hex(OTHER_KEY_HEX, "test")


@pytest.fixture(scope="session", autouse=True)
def worker_state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each test process (an xdist worker) has a private state folder of its own
    (orchestrator/host/private_state.py), inherited by every runner it starts: one worker's
    reaper never takes another's sandboxes or Ray markers, and chain anchors of
    hand-made run ids never meet. A test that needs a fresh one takes `state_dir`."""
    folder = tmp_path_factory.mktemp("state")
    before = os.environ.get(STATE_ENV_VAR)
    os.environ[STATE_ENV_VAR] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(STATE_ENV_VAR, None)
        else:
            os.environ[STATE_ENV_VAR] = before


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state folder of this test's own (head secret, anchors, markers, sandboxes)."""
    folder = tmp_path / "state"
    monkeypatch.setenv(STATE_ENV_VAR, str(folder))
    return folder


@pytest.fixture
def private_tmp() -> Iterator[Path]:
    """A temporary root of its own (short: Ray's sockets live under it), for a test that
    kills a runner and then checks what `sandbox reap` reports. Every run and every
    sandbox open reaps what dead owners left in the temporary root; under xdist one on
    the other worker took this test's leftovers first. Children started with
    TMPDIR set here keep their key folder, Ray marker, Ray session and workspaces where
    no other test's reaper looks."""
    root = Path(tempfile.mkdtemp(prefix="cg-t-", dir="/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@cache
def cached_task(task_id: str) -> Task:
    """Generation is pure, so every test in a process shares one copy of each task."""
    return generate_task(task_id, resolve_key(environ={}))


#: Every family: the tests parametrized over it are part of the family contract.
FAMILIES = ("ate", "adjustment", "null_detect", "cate", "mediation", "obs_vs_rct")
V1, V2 = FAMILIES[:3], FAMILIES[3:]

#: The tasks property tests draw from: whole null_detect blocks and the first 20 ids of
#: each seed family (8 of each multi-estimand one, whose tasks are larger), a few
#: far-away train indices and a spread of both frozen splits. Sharing one sample
#: (through `cached_task`) means a property costs a lookup, not a regeneration.
SHARED_SAMPLE: tuple[str, ...] = (
    *(f"train:{family}:{index}" for family in V1 for index in range(20)),
    *(f"train:{family}:{index}" for family in V2 for index in range(8)),
    *(f"train:{family}:{index}" for family in FAMILIES for index in (10**4 + 7, 10**9 + 9)),
    *(f"eval-v1:{family}:{index}" for family in V1 for index in (3, 61, 118, 157)),
    *(f"eval-v2:{family}:{index}" for family in V2 for index in (3, 61, 118)),
)


def reference_fit(task: Task) -> tuple[float, float]:
    """The honest reference's estimate and SE on the task's staged bytes: stored at
    generation on the linear tiers, fitted here on an expert task (generation fits
    nothing there: its anchor is the efficiency bound)."""
    truth = task.hidden.estimands["ate"]
    if truth.reference_estimate is not None and truth.reference_se is not None:
        return truth.reference_estimate, truth.reference_se
    from causal_gym.reference import analyst, answer

    dictionary = analyst.parse_readme(task.public.files["README.md"].decode())
    fit = answer.honest_fit(
        analyst.read_staged(task.public.files["data.csv"], dictionary), dictionary
    )
    return fit.estimate, fit.se
