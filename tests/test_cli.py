"""The task CLI end to end: one test through the installed console script, the rest
in-process (same commands, exit codes and streams, without a subprocess each)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from causal_gym.make import generate_task
from causal_gym.rng_keys import parse_key_hex
from tests.conftest import OTHER_KEY_HEX
from tests.support.cli import causal_gym_cli as run

CONSOLE_SCRIPT = Path(sys.executable).with_name("causal-gym")


def test_materialize_writes_exactly_two_files_and_metadata(tmp_path: Path) -> None:
    out = tmp_path / "task"
    env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    proc = subprocess.run(
        [str(CONSOLE_SCRIPT), "materialize", "train:null_detect:4", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(proc.stdout)
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "data.csv"]
    real = {"source"} if meta["tier"] == "real" else set()  # (this id is real: its table)
    assert (
        set(meta) == {"task_id", "family", "tier", "n_rows", "sha256", "generation_attempts"} | real
    )
    assert meta["task_id"] == "train:null_detect:4" and meta["family"] == "null_detect"
    data = (out / "data.csv").read_bytes()
    assert meta["n_rows"] == data.count(b"\n") - 1
    for name in ("data.csv", "README.md"):
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == meta["sha256"][name]
        assert (out / name).stat().st_mode & 0o777 == 0o644
    assert meta["generation_attempts"] >= 1
    # re-materializing into the same directory is allowed and idempotent
    again = run("materialize", "train:null_detect:4", "--out", str(out))
    assert again.returncode == 0 and json.loads(again.stdout) == meta


@pytest.mark.parametrize(
    ("task_id", "fragment"),
    [
        ("train:ate", "expected <namespace>:<family>:<index>"),
        ("nope:ate:1", "accepted namespaces are train, eval-v1"),
        ("train:cates:1", "accepted families are ate, adjustment, null_detect, cate, mediation"),
        ("train:ate:-4", "non-negative decimal integer"),
    ],
)
def test_bad_ids_exit_2_with_one_line_and_write_nothing(
    tmp_path: Path, task_id: str, fragment: str
) -> None:
    out = tmp_path / "never"
    proc = run("materialize", task_id, "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and fragment in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not out.exists()


def test_bad_key_exits_2_without_echoing_it(tmp_path: Path) -> None:
    out = tmp_path / "never"
    proc = run("materialize", "train:ate:1", "--out", str(out), env_key="not-hex-at-all")
    assert proc.returncode == 2 and "not valid hex" in proc.stderr
    assert "not-hex-at-all" not in proc.stderr and proc.stderr.count("\n") == 1
    assert not out.exists()
    key_file = tmp_path / "key"
    key_file.write_text("zz" * 20)
    proc = run("materialize", "train:ate:1", "--out", str(out), "--key-file", str(key_file))
    assert proc.returncode == 2 and "key file" in proc.stderr and "zz" * 20 not in proc.stderr
    missing = run("inspect", "train:ate:1", "--key-file", str(tmp_path / "absent"))
    assert missing.returncode == 2 and "cannot read key file" in missing.stderr


def test_refuses_a_directory_with_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    proc = run("materialize", "train:ate:1", "--out", str(tmp_path))
    assert proc.returncode == 2 and "already holds other files" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_inspect_needs_reveal_for_the_truth() -> None:
    hidden = run("inspect", "train:adjustment:2")
    assert hidden.returncode == 0 and 'ate"' not in hidden.stdout
    assert "edges" not in hidden.stdout and "--reveal" in hidden.stderr
    revealed = json.loads(run("inspect", "train:adjustment:2", "--reveal").stdout)
    required = {
        "task_id",
        "family",
        "tier",
        "treatment",
        "outcome",
        "ate",
        "pre_treatment",
        "post_treatment",
        "latent",
        "edges",
        "reference_se",
        "reference_width",
        "scale",
    }
    assert required <= set(revealed)
    names = (
        set(revealed["pre_treatment"]) | set(revealed["post_treatment"]) | set(revealed["latent"])
    )
    names |= {revealed["treatment"], revealed["outcome"]}
    assert {n for edge in revealed["edges"] for n in edge} <= names
    assert revealed["latent"] and any(edge[0] in revealed["latent"] for edge in revealed["edges"])


def test_key_file_and_env_precedence(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(OTHER_KEY_HEX + "\n")
    default = json.loads(run("inspect", "train:ate:9").stdout)
    from_file = json.loads(run("inspect", "train:ate:9", "--key-file", str(key_file)).stdout)
    from_env = run("inspect", "train:ate:9", "--key-file", str(key_file), env_key="77" * 32)
    by_key = {
        name: generate_task("train:ate:9", parse_key_hex(hex_key, "test")).public.sha256("data.csv")
        for name, hex_key in (("file", OTHER_KEY_HEX), ("env", "77" * 32))
    }
    # each source yields exactly its own key's task, and the environment wins
    assert from_file["sha256"]["data.csv"] == by_key["file"]
    assert json.loads(from_env.stdout)["sha256"]["data.csv"] == by_key["env"]
    assert len({default["sha256"]["data.csv"], *by_key.values()}) == 3
    assert "takes precedence" in from_env.stderr
    for proc_out in (from_env.stdout, from_env.stderr):
        assert "77" * 32 not in proc_out and OTHER_KEY_HEX not in proc_out
