"""Build a frozen split's manifest from the generator, and check the generator against it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from causal_gym.contracts.families import split_counts
from causal_gym.errors import GeneratorVersionError, ManifestKeyError
from causal_gym.generate.draw import plan_task
from causal_gym.generate.pipeline import build_task
from causal_gym.namespaces import Namespace
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.splits.manifest import Manifest, ManifestEntry, split_ids
from causal_gym.task_id import Family, TaskId
from causal_gym.versions import generator_version

Tick = Callable[[str], None]


@dataclass(frozen=True)
class Mismatch:
    """One field of a manifest entry that the generator no longer reproduces."""

    task_id: str
    field: str
    expected: object
    actual: object


def build_manifest(
    key: DerivationKey, tick: Tick | None = None, split: str = Namespace.EVAL_V1
) -> Manifest:
    """Freeze a split: each task at its derived base row count (no train jitter)."""
    entries = []
    for task_id in split_ids(split):
        tid = TaskId.parse(task_id)
        task = build_task(tid, key, staged_rows=plan_task(key, tid).base_rows)
        entries.append(ManifestEntry.model_validate(task.public.metadata()))
        if tick:
            tick(task_id)
    return Manifest(
        split=Namespace(split),
        generator_version=generator_version(split),
        key_fingerprint=key.fingerprint,
        counts={Family(name): n for name, n in split_counts(split).items()},
        tasks=tuple(entries),
    )


def spread_sample(entries: tuple[ManifestEntry, ...], limit: int | None) -> list[ManifestEntry]:
    """`limit` entries evenly spaced over the manifest (all families), or all of them."""
    if limit is None or limit >= len(entries):
        return list(entries)
    if limit < 1:
        raise ValueError(f"--limit must be >= 1, got {limit}")
    step = len(entries) / limit
    return [entries[int(i * step)] for i in range(limit)]


def verify_entries(
    manifest: Manifest,
    entries: Iterable[ManifestEntry],
    key: DerivationKey,
    tick: Tick | None = None,
) -> list[Mismatch]:
    """Rebuild each entry's task at its frozen row count and list every field that
    differs; GeneratorVersionError or ManifestKeyError first when this generator or this
    key cannot reproduce the split at all."""
    own = generator_version(manifest.split)
    if manifest.generator_version != own:
        raise GeneratorVersionError(
            f"{manifest.split} was frozen by generator version {manifest.generator_version}; "
            f"this causal-gym generates it with version {own}: its tasks differ by design "
            "(CHANGELOG.md)"
        )
    if key.fingerprint != manifest.key_fingerprint:
        raise ManifestKeyError(
            f"{manifest.split} was frozen with key fingerprint {manifest.key_fingerprint}, "
            f"not {key.fingerprint}: verify with the default key (unset CAUSAL_GYM_KEY)"
        )
    mismatches = []
    for entry in entries:
        # at the manifest's own row count, as causal_gym.make gives it to every eval id
        task = build_task(TaskId.parse(entry.task_id), key, staged_rows=entry.n_rows)
        actual = ManifestEntry.model_validate(task.public.metadata())
        for field in ("family", "tier", "n_rows", "sha256", "generation_attempts", "source"):
            if getattr(actual, field) != getattr(entry, field):
                mismatches.append(
                    Mismatch(entry.task_id, field, getattr(entry, field), getattr(actual, field))
                )
        if tick:
            tick(entry.task_id)
    return mismatches
