"""Regenerate causal_gym/manifests/eval-v1.json with DEFAULT_EVAL_KEY.

Only for a deliberate, versioned change of the frozen split: the diff of the
committed file then lists every task that moved.
"""

from __future__ import annotations

from rich.progress import Progress

from causal_gym.rng_keys import resolve_key
from causal_gym.splits.freeze import build_manifest
from causal_gym.splits.manifest import eval_v1_ids, manifest_json, manifest_path


def main() -> None:
    key = resolve_key(environ={})
    with Progress() as progress:
        job = progress.add_task("freezing eval-v1", total=len(eval_v1_ids()))
        manifest = build_manifest(key, tick=lambda _tid: progress.advance(job))
    path = manifest_path()
    path.write_text(manifest_json(manifest))
    print(f"wrote {path} ({len(manifest.tasks)} tasks)")


if __name__ == "__main__":
    main()
