"""causal_gym as a verifiers v1 taskset: loading, splits, config guards (no model)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import verifiers.v1 as vf
from pydantic import ValidationError
from verifiers.v1.utils.loaders import load_taskset

import causal_gym
from causal_gym.contracts.families import family_names
from causal_gym.errors import KeyFormatError
from causal_gym.rng_keys import DEFAULT_EVAL_KEY
from causal_gym.splits.manifest import load_manifest, split_ids
from causal_gym.vf import CausalGymTaskset, CausalGymTasksetConfig
from causal_gym.vf.keys import refuse_unsafe_runtime, resolve_run_key
from causal_gym.vf.task import CausalGymTaskConfig, generated


def test_exports_exactly_one_taskset_and_no_harness() -> None:
    tasksets = [
        n
        for n in causal_gym.__all__
        if isinstance(getattr(causal_gym, n), type)
        and issubclass(getattr(causal_gym, n), vf.Taskset)
    ]
    assert tasksets == ["CausalGymTaskset"]
    harnesses = [
        n
        for n in causal_gym.__all__
        if isinstance(getattr(causal_gym, n), type)
        and issubclass(getattr(causal_gym, n), vf.Harness)
    ]
    assert harnesses == []
    for name in ("causal_gym", "causal-gym"):  # the loader maps either to the package
        loaded = load_taskset(CausalGymTasksetConfig(id=name, split="eval-v1"))
        assert type(loaded) is CausalGymTaskset


def test_plain_import_does_not_load_verifiers() -> None:
    code = "import sys, causal_gym; print('verifiers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_eval_v1_split_yields_the_manifest_in_order() -> None:
    taskset = CausalGymTaskset(CausalGymTasksetConfig(split="eval-v1"))
    assert taskset.bounded
    key = resolve_run_key(None, environ={})
    ids = []
    # Lazily, so each task is generated once (by load) and then read from the cache.
    for task, entry in zip(taskset, load_manifest("eval-v1").tasks, strict=True):
        ids.append(task.data.id)
        public = generated(entry.task_id, key).public
        assert public.metadata()["sha256"] == entry.sha256, entry.task_id
        assert task.data.family == entry.family.value
        assert task.data.workdir == "/workspace"
        assert public.files["README.md"].decode() in task.data.prompt
    assert ids == split_ids("eval-v1") and len(ids) == 500


def test_eval_v2_split_serves_the_multi_estimand_families() -> None:
    """The first task of each family, the staged bytes of the manifest, and the
    task data carrying what the submission answers."""
    key = resolve_run_key(None, environ={})
    manifest = load_manifest("eval-v2")
    assert manifest.counts == {"cate": 150, "mediation": 150, "obs_vs_rct": 150}
    for family in manifest.counts:
        config = CausalGymTasksetConfig(split="eval-v2", families=[family])
        taskset = CausalGymTaskset(config)
        assert taskset.bounded
        task = next(iter(taskset.take(1)))
        assert task.data.id == f"eval-v2:{family}:0"
        public = generated(task.data.id, key).public
        entry = manifest.entry(task.data.id)
        assert entry is not None and public.metadata()["sha256"] == entry.sha256
        assert task.data.estimands == list(public.estimands)
        assert (len(task.data.estimands) > 1) == (family != "obs_vs_rct")
    assert list(split_ids("eval-v2"))[::150] == [
        "eval-v2:cate:0", "eval-v2:mediation:0", "eval-v2:obs_vs_rct:0"
    ]  # fmt: skip


def test_train_split_is_infinite_and_interleaves_families() -> None:
    taskset = CausalGymTaskset(CausalGymTasksetConfig(split="train"))
    assert taskset.INFINITE and not taskset.bounded
    families = list(family_names())  # every registered family, in registry order
    assert families[:6] == ["ate", "adjustment", "null_detect", "cate", "mediation", "obs_vs_rct"]
    first = [t.data.id for t in taskset.take(len(families) + 1)]
    assert first == [f"train:{f}:0" for f in families] + ["train:ate:1"]
    only = CausalGymTaskset(CausalGymTasksetConfig(split="train", families=["null_detect"]))
    assert [t.data.id for t in only.take(2)] == ["train:null_detect:0", "train:null_detect:1"]


def test_config_rejects_bad_values_before_anything_runs() -> None:
    with pytest.raises(ValidationError, match="train"):
        CausalGymTasksetConfig(split="eval-v4")
    with pytest.raises(ValidationError, match="not hold the key itself"):
        CausalGymTaskConfig(env_key="ab" * 32)
    with pytest.raises(ValidationError, match="not an environment variable name"):
        CausalGymTaskConfig(env_key="my-key")
    assert CausalGymTaskConfig(env_key="MY_EVAL_KEY").env_key == "MY_EVAL_KEY"


def test_key_precedence_for_runs() -> None:
    a, b = "12" * 32, "34" * 32
    assert resolve_run_key(None, environ={}).raw == bytes.fromhex(DEFAULT_EVAL_KEY)
    assert resolve_run_key("MINE", environ={"MINE": a}).raw == bytes.fromhex(a)
    assert resolve_run_key("MINE", environ={"MINE": a, "CAUSAL_GYM_KEY": b}).raw == bytes.fromhex(b)
    with pytest.raises(KeyFormatError, match="MINE, which is not set"):
        resolve_run_key("MINE", environ={})
    with pytest.raises(KeyFormatError, match="not valid hex"):
        resolve_run_key("MINE", environ={"MINE": "zz"})


def test_secret_keys_refuse_non_isolating_runtimes() -> None:
    secret = resolve_run_key(None, environ={"CAUSAL_GYM_KEY": "56" * 32})
    public = resolve_run_key(None, environ={})
    refuse_unsafe_runtime("subprocess", public)
    refuse_unsafe_runtime("docker", secret)
    with pytest.raises(KeyFormatError, match="subprocess runtime cannot hide it"):
        refuse_unsafe_runtime("subprocess", secret)


@pytest.mark.vf
def test_uv_run_eval_finds_the_console_script(tmp_path) -> None:
    """`uv run eval causal_gym ...` resolves this project's `eval` script (dry run)."""
    import json
    import os
    import shutil
    from pathlib import Path

    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv is a test dependency"
    repo = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "VIRTUAL_ENV": str(Path(sys.executable).parents[1]),
        "UV_PROJECT_ENVIRONMENT": str(Path(sys.executable).parents[1]),
    }
    env.pop("CAUSAL_GYM_KEY", None)
    proc = subprocess.run(
        [
            uv,
            "run",
            "--no-sync",
            "eval",
            "causal_gym",
            "-n",
            "3",
            "--env.taskset.split",
            "eval-v1",
            "--env.agent.runtime.type",
            "docker",
            "--dry-run",
            "--no-push",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=repo,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    [resolved] = list(tmp_path.rglob("eval.json"))
    config = json.loads(resolved.read_text())
    flat = json.dumps(config)
    assert "eval-v1" in flat and "causal_gym" in flat
    assert DEFAULT_EVAL_KEY not in flat
