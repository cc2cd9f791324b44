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
from dataclasses import dataclass

import numpy as np

from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task_id import TaskId

STREAM_NAMES: tuple[str, ...] = (
    "scm",
    "data",
    "messiness",
    "naming",
    "prompt",
    "trial",
    "anchor",
    "effect",
)


def _mac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def generator_from_digest(digest: bytes) -> np.random.Generator:
    """A PCG64 generator seeded with all 256 bits of a digest."""
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest, "big")))


@dataclass(frozen=True)
class TaskStreams:
    """The generators of one generation attempt of one task (`trial`: obs_vs_rct's
    randomized trial, its size, sample and mess; `anchor`: the expert tier's Monte
    Carlo for its reward anchor, the linear tiers' too; `effect`: generator version 3's
    effect-size hyperprior)."""

    scm: np.random.Generator
    data: np.random.Generator
    messiness: np.random.Generator
    naming: np.random.Generator
    prompt: np.random.Generator
    trial: np.random.Generator
    anchor: np.random.Generator
    effect: np.random.Generator


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


def derive_block_rng(
    key: DerivationKey, namespace: str, block: int, family: str = "null_detect"
) -> np.random.Generator:
    """Stream that orders the effect classes inside one block of a family's indices
    (null_detect: 20 tasks; obs_vs_rct: 10).

    The message has four colon-separated parts, so it can never equal a task id.
    """
    return generator_from_digest(_mac(key.raw, f"{namespace}:{family}:block:{block}"))


def derive_real_block_rng(
    key: DerivationKey, namespace: str, block: int, family: str
) -> np.random.Generator:
    """Stream that decides whether a whole block of a block family's train indices is
    of the real tier, so the tier holds whole blocks (and their fixed class mix).

    Four colon-separated parts, like the block stream's, under another third part."""
    return generator_from_digest(_mac(key.raw, f"{namespace}:{family}:real-block:{block}"))
