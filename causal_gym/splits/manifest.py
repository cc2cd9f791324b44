"""The manifests of the frozen splits (every namespace but train): which ids a split
holds and what they stage.

A manifest pins each task's staged row count (so a frozen split never depends on the
train jitter or on later tier edits) and the sha256 of every staged file (so any
machine can check it reproduces the split byte for byte). Which families a split
holds, and how many of each, is the families' own declaration
(contracts/families.split_counts); the manifest records what freezing made of it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.contracts.families import contract_of, split_counts
from causal_gym.errors import TaskIdError
from causal_gym.plan.tiers import Tier
from causal_gym.task_id import SPLITS, Family, Namespace, TaskId


class ManifestEntry(BaseModel):
    """One frozen task: its id, family and tier, its staged row count, the sha256 of
    every staged file and the attempts its generation took."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    family: Family
    tier: Tier
    n_rows: int = Field(gt=0)
    sha256: dict[str, str]
    generation_attempts: int = Field(ge=1)
    #: The real tier's source table (eval-real-v1); absent everywhere else.
    source: str | None = None

    @model_validator(mode="after")
    def _every_staged_file(self) -> ManifestEntry:
        staged = contract_of(self.family).staged_files
        if sorted(self.sha256) != sorted(staged):
            raise ValueError(f"sha256 must cover exactly {staged}")
        return self


class Manifest(BaseModel):
    """A frozen split as committed: the generator version and key fingerprint that froze
    it, its count per family and every task's entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    split: Namespace
    generator_version: int = Field(ge=1)
    key_fingerprint: str
    counts: dict[Family, int]
    tasks: tuple[ManifestEntry, ...]

    @model_validator(mode="after")
    def _a_frozen_split(self) -> Manifest:
        if self.split is Namespace.TRAIN:
            raise ValueError("train is not a frozen split")
        return self

    def entry(self, task_id: str) -> ManifestEntry | None:
        """The entry of a task id, or None when the split does not hold it."""
        return self._index().get(task_id)

    def _index(self) -> dict[str, ManifestEntry]:
        return {e.task_id: e for e in self.tasks}


def manifest_path(split: str) -> Path:
    """Where a split's committed manifest is, inside the installed package."""
    return Path(str(resources.files("causal_gym").joinpath("manifests", f"{split}.json")))


def split_ids(split: str) -> list[str]:
    """Every id of a frozen split, family by family in registry order."""
    counts = split_counts(check_split(split))
    return [f"{split}:{family}:{i}" for family, n in counts.items() for i in range(n)]


def check_split(split: str) -> str:
    """The split's name back; TaskIdError naming the accepted splits otherwise."""
    if split not in SPLITS:
        raise TaskIdError(f"unknown split {split!r}: accepted splits are {', '.join(SPLITS)}")
    return split


@cache
def load_manifest(split: str) -> Manifest:
    """A frozen split's committed manifest, read and validated once per process."""
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
        ranges = ", ".join(f"{split}:{f}:0-{n - 1}" for f, n in counts.items())
        raise TaskIdError(f"{task_id} is not in the frozen {split} manifest (it holds {ranges})")
    return rows


def manifest_json(manifest: Manifest) -> str:
    """One task per line, so a diff of the committed file shows exactly what moved."""
    head = manifest.model_dump(mode="json", exclude={"tasks"})
    lines = [
        json.dumps(e.model_dump(mode="json", exclude_none=True), sort_keys=True)
        for e in manifest.tasks
    ]
    body = ",\n    ".join(lines)
    header = json.dumps(head, sort_keys=True)[1:-1]
    return f'{{{header},\n  "tasks": [\n    {body}\n  ]\n}}\n'
