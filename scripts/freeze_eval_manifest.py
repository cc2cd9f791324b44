"""Regenerate causal_gym/manifests/<split>.json with DEFAULT_EVAL_KEY
(`python scripts/freeze_eval_manifest.py [eval-v1|eval-v2|eval-expert-v1]`, eval-v1 by
default).

Only for a deliberate, versioned change of the frozen split: the diff of the
committed file then lists every task that moved.
"""

from __future__ import annotations

import sys

from rich.progress import Progress

from causal_gym.rng_keys import resolve_key
from causal_gym.splits.freeze import build_manifest
from causal_gym.splits.manifest import check_split, manifest_json, manifest_path, split_ids


def main() -> None:
    split = check_split(sys.argv[1] if len(sys.argv) > 1 else "eval-v1")
    key = resolve_key(environ={})
    with Progress() as progress:
        job = progress.add_task(f"freezing {split}", total=len(split_ids(split)))
        manifest = build_manifest(key, tick=lambda _tid: progress.advance(job), split=split)
    path = manifest_path(split)
    path.write_text(manifest_json(manifest))
    print(f"wrote {path} ({len(manifest.tasks)} tasks)")


if __name__ == "__main__":
    main()
