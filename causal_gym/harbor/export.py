"""A frozen public split as a folder of Harbor tasks plus its `dataset.toml`.

The whole export is built in a fresh sibling folder and renamed into place at the
end, so an interrupted export leaves nothing at `out`, and an existing `out` is never
touched. Each task's digest is Harbor's own (its Packager's content hash: the SHA-256
of the sorted lines `relative path NUL sha256(file) LF`), so `dataset.toml` pins every
folder byte for byte, and two exports of a split are byte-identical.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from causal_gym.errors import CausalGymError
from causal_gym.harbor import layout
from causal_gym.harbor.task_folder import (
    BASE_IMAGE,
    FolderFile,
    export_versions,
    task_files,
    toml_value,
)
from causal_gym.make import generate_task
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.splits.manifest import ManifestEntry, load_manifest, manifest_path
from causal_gym.task_id import TaskId


class HarborExportError(CausalGymError):
    """The export cannot be made as asked (the message says why and what is accepted)."""


@dataclass(frozen=True)
class ExportedTask:
    """One folder as dataset.toml lists it: Harbor's name and digest."""

    name: str
    digest: str


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    split: str
    out: Path
    tasks: tuple[ExportedTask, ...]


def content_digest(files: dict[str, FolderFile]) -> str:
    """Harbor's task digest (harbor.publisher.packager.Packager.compute_content_hash)
    of a folder holding exactly `files` and no .gitignore."""
    outer = hashlib.sha256()
    for rel in sorted(files):
        outer.update(f"{rel}\0{hashlib.sha256(files[rel].data).hexdigest()}\n".encode())
    return outer.hexdigest()


def select(
    entries: Sequence[ManifestEntry], families: Sequence[str] | None, per_family: int | None
) -> list[ManifestEntry]:
    """The split's entries in manifest order, of `families` only, the first
    `per_family` of each."""
    chosen, seen = [], dict[str, int]()
    for entry in entries:
        family = entry.family.value
        if families is not None and family not in families:
            continue
        if per_family is not None and seen.get(family, 0) >= per_family:
            continue
        seen[family] = seen.get(family, 0) + 1
        chosen.append(entry)
    return chosen


def dataset_toml(split: str, tasks: Sequence[ExportedTask], generator: int, reward: int) -> str:
    """Harbor's dataset manifest: every task by name and digest."""
    lines = [
        "# causal-gym as Harbor tasks: written by `causal-gym export harbor`.",
        "[dataset]",
        f"name = {toml_value(f'{layout.ORG}/{split}')}",
        f"description = {toml_value(f'The frozen causal-gym split {split}, one task a folder.')}",
        "",
    ]
    for task in tasks:
        lines += [
            "[[tasks]]",
            f"name = {toml_value(task.name)}",
            f'digest = "sha256:{task.digest}"',
            "",
        ]
    lines += [
        "[metadata]",
        f"split = {toml_value(split)}",
        f"generator_version = {generator}",
        f"reward_version = {reward}",
        "",
    ]
    return "\n".join(lines)


def _write(root: Path, files: dict[str, FolderFile]) -> None:
    for rel, file in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file.data)
        os.chmod(path, file.mode)


def export_split(
    split: str,
    out: Path,
    key: DerivationKey,
    families: Sequence[str] | None = None,
    per_family: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    base_image: str = BASE_IMAGE,
) -> ExportSummary:
    """Write `out` (which must not exist) holding one folder per chosen task of
    `split` and its dataset.toml; the public key only."""
    if not key.is_default:
        raise HarborExportError(
            "a Harbor export holds the frozen public splits only: unset CAUSAL_GYM_KEY "
            "(a secret key's tasks must not leave the head)"
        )
    manifest = load_manifest(split)
    if manifest.key_fingerprint != key.fingerprint:
        raise HarborExportError(f"{split} was not frozen under the public key")
    if out.exists():
        raise HarborExportError(f"--out {out} exists: give a new folder")
    if not out.parent.is_dir():
        raise HarborExportError(f"--out {out}: its folder {out.parent} does not exist")
    entries = select(manifest.tasks, families, per_family)
    if not entries:
        raise HarborExportError(f"no task of {split} matches the families asked for")
    versions = export_versions(
        split,
        manifest.generator_version,
        hashlib.sha256(manifest_path(split).read_bytes()).hexdigest(),
        base_image,
    )
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        os.chmod(staging, 0o755)
        exported = []
        for done, entry in enumerate(entries):
            public = generate_task(TaskId.parse(entry.task_id), key).public
            if {n: public.sha256(n) for n in public.staged_files} != entry.sha256:
                raise HarborExportError(f"{entry.task_id} does not reproduce its manifest")
            files = task_files(public, entry, split, versions)
            name = layout.folder_name(entry.task_id)
            _write(staging / name, files)
            exported.append(ExportedTask(f"{layout.ORG}/{name}", content_digest(files)))
            if progress is not None:
                progress(done + 1, len(entries))
        text = dataset_toml(split, exported, versions.generator, versions.reward)
        _write(staging, {"dataset.toml": FolderFile(text.encode())})
        os.rename(staging, out)  # fails, leaving nothing behind, if `out` appeared meanwhile
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExportSummary(split, out, tuple(exported))
