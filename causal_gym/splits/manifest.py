"""The frozen eval-v1 manifest: which ids the split holds and what they stage.

The manifest pins each task's staged row count (so eval-v1 never depends on the
train jitter or on later tier edits) and the sha256 of both staged files (so any
machine can check it reproduces the split byte for byte).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.contracts.families import contract_of
from causal_gym.contracts.families import split_counts as declared_counts
from causal_gym.errors import TaskIdError
from causal_gym.plan.tiers import Tier
from causal_gym.task_id import SPLITS, Family, Namespace, TaskId

EVAL_V1: Final = Namespace.EVAL_V1.value
EVAL_V2: Final = Namespace.EVAL_V2.value
#: The expert tier's own split (every task expert; no other split holds one).
EVAL_EXPERT_V1: Final = Namespace.EVAL_EXPERT_V1.value


def split_counts(split: str) -> dict[Family, int]:
    """Tasks per family in a frozen split, as each family declares them, in registry
    order."""
    return {Family(name): count for name, count in declared_counts(split).items()}


#: Tasks per family in eval-v1.
EVAL_V1_COUNTS: dict[Family, int] = split_counts(EVAL_V1)


class ManifestEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    family: Family
    tier: Tier
    n_rows: int = Field(gt=0)
    sha256: dict[str, str]
    generation_attempts: int = Field(ge=1)

    @model_validator(mode="after")
    def _every_staged_file(self) -> ManifestEntry:
        staged = contract_of(self.family).staged_files
        if sorted(self.sha256) != sorted(staged):
            raise ValueError(f"sha256 must cover exactly {staged}")
        return self


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    split: Literal["eval-v1", "eval-v2", "eval-expert-v1"]
    generator_version: int = Field(ge=1)
    key_fingerprint: str
    counts: dict[Family, int]
    tasks: tuple[ManifestEntry, ...]

    def entry(self, task_id: str) -> ManifestEntry | None:
        return self._index().get(task_id)

    def _index(self) -> dict[str, ManifestEntry]:
        return {e.task_id: e for e in self.tasks}


def manifest_path(split: str = EVAL_V1) -> Path:
    return Path(str(resources.files("causal_gym").joinpath("manifests", f"{split}.json")))


def split_ids(split: str) -> list[str]:
    """Every id of a frozen split, family by family in registry order."""
    counts = split_counts(check_split(split))
    return [f"{split}:{family.value}:{i}" for family, n in counts.items() for i in range(n)]


def eval_v1_ids() -> list[str]:
    return split_ids(EVAL_V1)


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise TaskIdError(f"unknown split {split!r}: accepted splits are {', '.join(SPLITS)}")
    return split


@cache
def load_manifest(split: str = EVAL_V1) -> Manifest:
    check_split(split)
    return Manifest.model_validate_json(manifest_path(split).read_bytes())


@cache
def _rows_by_id(split: str) -> dict[str, int]:
    return {e.task_id: e.n_rows for e in load_manifest(split).tasks}


def frozen_rows(task_id: TaskId) -> int:
    """Frozen staged row count of a task of a frozen split; ids outside it are an error."""
    if task_id.namespace is Namespace.TRAIN:
        raise TaskIdError(f"{task_id} is not in a frozen split")
    split = task_id.namespace.value
    rows = _rows_by_id(split).get(str(task_id))
    if rows is None:
        counts = split_counts(split)
        ranges = ", ".join(f"{split}:{f.value}:0-{n - 1}" for f, n in counts.items())
        raise TaskIdError(f"{task_id} is not in the frozen {split} manifest (it holds {ranges})")
    return rows


def eval_v1_rows(task_id: TaskId) -> int:
    """Frozen staged row count of an eval-v1 task; ids outside the split are an error."""
    if task_id.namespace is not Namespace.EVAL_V1:
        raise TaskIdError(f"{task_id} is not an eval-v1 task")
    return frozen_rows(task_id)


def manifest_json(manifest: Manifest) -> str:
    """One task per line, so a diff of the committed file shows exactly what moved."""
    head = manifest.model_dump(mode="json", exclude={"tasks"})
    lines = [json.dumps(e.model_dump(mode="json"), sort_keys=True) for e in manifest.tasks]
    body = ",\n    ".join(lines)
    header = json.dumps(head, sort_keys=True)[1:-1]
    return f'{{{header},\n  "tasks": [\n    {body}\n  ]\n}}\n'
