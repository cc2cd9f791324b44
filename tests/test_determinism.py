"""Same key + id => same bytes, in any process; other keys/namespaces => other tasks."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from causal_gym import generate_task
from scripts.write_golden_hashes import GOLDEN_IDS, GOLDEN_PATH

REPO = Path(__file__).resolve().parents[1]


def materialize_in_subprocess(task_id: str, out: Path, hash_seed: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    env["PYTHONHASHSEED"] = hash_seed
    proc = subprocess.run(
        [sys.executable, "-m", "causal_gym.cli", "materialize", task_id, "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=REPO,
    )
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_separate_processes_write_identical_bytes(tmp_path: Path) -> None:
    for task_id in ("train:adjustment:5", "eval-v1:null_detect:3", "eval-real-v1:ate:7",
                    "train:did:1"):  # fmt: skip
        first = materialize_in_subprocess(task_id, tmp_path / "a" / task_id, "1")
        second = materialize_in_subprocess(task_id, tmp_path / "b" / task_id, "987")
        assert first == second
        for name in ("data.csv", "README.md"):
            a = (tmp_path / "a" / task_id / name).read_bytes()
            b = (tmp_path / "b" / task_id / name).read_bytes()
            assert a == b
            assert hashlib.sha256(a).hexdigest() == first["sha256"][name]


def test_golden_hashes_hold(default_key) -> None:
    golden = json.loads(GOLDEN_PATH.read_text())
    assert sorted(golden) == sorted(GOLDEN_IDS)
    for task_id, record in golden.items():
        assert generate_task(task_id, default_key).public.metadata() == record, task_id


def test_other_keys_give_unrelated_tasks(default_key, other_key) -> None:
    ates_a, ates_b = [], []
    for i in range(24):
        a = generate_task(f"train:ate:{i}", default_key)
        b = generate_task(f"train:ate:{i}", other_key)
        assert a.public.files["data.csv"] != b.public.files["data.csv"]
        assert a.hidden.ate != b.hidden.ate
        ates_a.append(a.hidden.ate)
        ates_b.append(b.hidden.ate)
    assert abs(np.corrcoef(ates_a, ates_b)[0, 1]) < 0.6


def test_namespaces_give_unrelated_tasks(default_key) -> None:
    for i in range(8):
        train = generate_task(f"train:adjustment:{i}", default_key)
        evaluation = generate_task(f"eval-v1:adjustment:{i}", default_key)
        assert train.public.files["data.csv"] != evaluation.public.files["data.csv"]
        assert train.public.files["README.md"] != evaluation.public.files["README.md"]
        assert train.hidden.ate != evaluation.hidden.ate
