"""Regenerate tests/golden/sha256.json: staged-file hashes for a few fixed task ids.

Run this only when a generator change is meant to change task bytes; the diff of the
JSON then shows exactly which tasks moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from causal_gym import generate_task, resolve_key

GOLDEN_IDS = (
    "train:ate:0",
    "train:ate:123456",
    "train:adjustment:7",
    "train:null_detect:19",
    "eval-v1:ate:0",
    "eval-v1:adjustment:42",
    "eval-v1:null_detect:159",
    "eval-expert-v1:ate:99",
    "eval-expert-v1:null_detect:0",
    "eval-v3:iv:0",
    "eval-v3:did:77",
    "eval-v3:rdd:149",
    "eval-real-v1:ate:0",
    "eval-real-v1:adjustment:49",
    "eval-real-v1:null_detect:59",
    "train:rdd:3",  # real (generator 5)
    "train:did:1",  # real (generator 5)
)
GOLDEN_PATH = Path(__file__).resolve().parents[1] / "tests" / "golden" / "sha256.json"


def golden_records() -> dict[str, dict[str, object]]:
    key = resolve_key(environ={})
    return {tid: generate_task(tid, key).public.metadata() for tid in GOLDEN_IDS}


if __name__ == "__main__":
    GOLDEN_PATH.write_text(json.dumps(golden_records(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN_PATH}")
