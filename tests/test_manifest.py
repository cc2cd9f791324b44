"""The frozen eval-v1 manifest: its shape, and a spread sample re-verified every CI run."""

from __future__ import annotations

from collections import Counter

import pytest

from causal_gym import generate_task
from causal_gym.errors import GeneratorVersionError, ManifestKeyError, TaskIdError
from causal_gym.families.null_detect.contract import NULL_BLOCK_SIZE
from causal_gym.generate.draw import plan_task
from causal_gym.splits.freeze import spread_sample, verify_entries
from causal_gym.splits.manifest import frozen_rows, load_manifest, split_ids
from causal_gym.task_id import TaskId
from causal_gym.versions import GENERATOR_VERSION, generator_version
from tests.support.cli import causal_gym_cli


def test_manifest_shape() -> None:
    manifest = load_manifest("eval-v1")
    assert len(manifest.tasks) == 500
    assert [e.task_id for e in manifest.tasks] == split_ids("eval-v1")
    families = Counter(e.family.value for e in manifest.tasks)
    assert families == {"ate": 170, "adjustment": 170, "null_detect": 160}
    assert families["null_detect"] % NULL_BLOCK_SIZE == 0  # whole blocks only
    assert len({e.tier for e in manifest.tasks}) == 3


def test_a_spread_sample_reproduces_byte_for_byte(default_key) -> None:
    manifest = load_manifest("eval-v1")
    sample = spread_sample(manifest.tasks, 24)
    assert {e.family for e in sample} == {e.family for e in manifest.tasks}
    assert verify_entries(manifest, sample, default_key) == []


def test_eval_rows_come_from_the_manifest(default_key) -> None:
    entry = load_manifest("eval-v1").tasks[7]
    tid = TaskId.parse(entry.task_id)
    assert frozen_rows(tid) == entry.n_rows == plan_task(default_key, tid).base_rows
    task = generate_task(tid, default_key)
    assert task.public.n_rows == entry.n_rows
    assert task.public.files["data.csv"].count(b"\n") == entry.n_rows + 1


@pytest.mark.parametrize(
    "task_id", ["eval-v1:ate:170", "eval-v1:null_detect:160", "eval-v1:adjustment:999999"]
)
def test_ids_outside_the_manifest_are_errors(default_key, task_id: str) -> None:
    with pytest.raises(TaskIdError, match="not in the frozen eval-v1 manifest"):
        generate_task(task_id, default_key)


def test_the_manifest_records_the_generator_it_was_frozen_by(default_key) -> None:
    """eval-v1 was re-frozen once, by generator 2 (CHANGELOG.md), and stays at 2 while
    train tasks move on (generator 6); a manifest from another generator version is
    refused by name, not reported as 500 mismatches."""
    manifest = load_manifest("eval-v1")
    assert manifest.generator_version == generator_version("eval-v1") == 2
    assert GENERATOR_VERSION == generator_version("train") == 6
    older = manifest.model_copy(update={"generator_version": 1})
    with pytest.raises(
        GeneratorVersionError,
        match="generator version 1; this causal-gym generates it with version 2",
    ):
        verify_entries(older, older.tasks[:1], default_key)


def test_other_key_cannot_verify(other_key) -> None:
    manifest = load_manifest("eval-v1")
    with pytest.raises(ManifestKeyError, match="unset CAUSAL_GYM_KEY"):
        verify_entries(manifest, manifest.tasks[:1], other_key)


def test_other_key_keeps_the_split_shape(other_key) -> None:
    entry = load_manifest("eval-v1").tasks[3]
    task = generate_task(entry.task_id, other_key)
    assert task.public.n_rows == entry.n_rows
    assert task.public.sha256("data.csv") != entry.sha256["data.csv"]


def test_cli_list_and_verify() -> None:
    listed = causal_gym_cli("manifest", "list")
    assert listed.returncode == 0 and listed.stdout.split() == split_ids("eval-v1")
    verified = causal_gym_cli("manifest", "verify", "--limit", "3")
    assert verified.returncode == 0 and "verified 3 of 500 tasks, 0 mismatches" in verified.stdout
    bad = causal_gym_cli("manifest", "list", "--split", "v2")
    assert bad.returncode == 2
    assert "accepted splits are eval-v1, eval-v2, eval-expert-v1, eval-v3" in bad.stderr


def test_eval_v2_manifest_shape_and_a_spread_sample_reproduces(default_key) -> None:
    """eval-v2 is verified in CI like eval-v1: the multi-estimand families, 150 each
    (whole obs_vs_rct blocks of 10), every staged file hashed (trial.csv too)."""
    from causal_gym.families.obs_vs_rct.contract import BIAS_BLOCK_SIZE
    from causal_gym.splits.manifest import split_ids

    manifest = load_manifest("eval-v2")
    assert [e.task_id for e in manifest.tasks] == split_ids("eval-v2")
    assert Counter(e.family.value for e in manifest.tasks) == {
        "cate": 150, "mediation": 150, "obs_vs_rct": 150
    }  # fmt: skip
    assert manifest.counts["obs_vs_rct"] % BIAS_BLOCK_SIZE == 0
    assert manifest.generator_version == generator_version("eval-v2") == 2
    trial = [e for e in manifest.tasks if e.family.value == "obs_vs_rct"]
    assert all(set(e.sha256) == {"data.csv", "trial.csv", "README.md"} for e in trial)
    sample = spread_sample(manifest.tasks, 12)
    assert {e.family for e in sample} == {e.family for e in manifest.tasks}
    assert verify_entries(manifest, sample, default_key) == []


@pytest.mark.parametrize(
    ("task_id", "split"), [("eval-v2:cate:150", "eval-v2"), ("eval-v2:ate:0", "eval-v2"),
                           ("eval-v1:mediation:0", "eval-v1"),
                           ("eval-expert-v1:ate:100", "eval-expert-v1"),
                           ("eval-expert-v1:cate:0", "eval-expert-v1")]
)  # fmt: skip
def test_ids_outside_either_manifest_are_errors(default_key, task_id: str, split: str) -> None:
    with pytest.raises(TaskIdError, match=f"not in the frozen {split} manifest"):
        generate_task(task_id, default_key)


def test_cli_lists_and_verifies_eval_v2() -> None:
    listed = causal_gym_cli("manifest", "list", "--split", "eval-v2")
    assert listed.returncode == 0 and len(listed.stdout.split()) == 450
    verified = causal_gym_cli("manifest", "verify", "--split", "eval-v2", "--limit", "3")
    assert verified.returncode == 0 and "verified 3 of 450 tasks, 0 mismatches" in verified.stdout


def test_eval_expert_manifest_shape_and_a_spread_sample_reproduces(default_key) -> None:
    """eval-expert-v1 is verified in CI like the other splits: the expert tier of the
    seed's families, 100 each (five whole null_detect blocks), every task expert."""
    from causal_gym.families.null_detect.contract import NULL_BLOCK_SIZE
    from causal_gym.splits.manifest import split_ids

    manifest = load_manifest("eval-expert-v1")
    assert [e.task_id for e in manifest.tasks] == split_ids("eval-expert-v1")
    assert Counter(e.family.value for e in manifest.tasks) == {
        "ate": 100, "adjustment": 100, "null_detect": 100
    }  # fmt: skip
    assert manifest.counts["null_detect"] % NULL_BLOCK_SIZE == 0
    assert {e.tier.value for e in manifest.tasks} == {"expert"}
    assert manifest.generator_version == generator_version("eval-expert-v1") == 2
    sample = spread_sample(manifest.tasks, 6)
    assert {e.family for e in sample} == {e.family for e in manifest.tasks}
    assert verify_entries(manifest, sample, default_key) == []


def test_cli_lists_and_verifies_eval_expert() -> None:
    listed = causal_gym_cli("manifest", "list", "--split", "eval-expert-v1")
    assert listed.returncode == 0 and len(listed.stdout.split()) == 300
    verified = causal_gym_cli("manifest", "verify", "--split", "eval-expert-v1", "--limit", "2")
    assert verified.returncode == 0 and "verified 2 of 300 tasks, 0 mismatches" in verified.stdout


def test_eval_v3_manifest_shape_a_spread_sample_and_the_cli_verify(default_key) -> None:
    """eval-v3 is verified in CI like the other splits: the design families, 150 each
    over every tier, frozen at generator 3, with no hidden subtier in what a manifest
    entry records; the CLI lists and verifies it."""
    manifest = load_manifest("eval-v3")
    assert [e.task_id for e in manifest.tasks] == split_ids("eval-v3")
    assert Counter(e.family.value for e in manifest.tasks) == {"iv": 150, "did": 150, "rdd": 150}
    for family in ("iv", "did", "rdd"):
        tiers = Counter(e.tier.value for e in manifest.tasks if e.family.value == family)
        assert set(tiers) == {"easy", "medium", "hard"} and min(tiers.values()) >= 30, tiers
    assert manifest.generator_version == generator_version("eval-v3") == 3
    assert "subtier" not in manifest.tasks[0].model_dump()
    sample = spread_sample(manifest.tasks, 6)
    assert {e.family for e in sample} == {e.family for e in manifest.tasks}
    assert verify_entries(manifest, sample, default_key) == []
    listed = causal_gym_cli("manifest", "list", "--split", "eval-v3")
    assert listed.returncode == 0 and listed.stdout.split() == split_ids("eval-v3")
    verified = causal_gym_cli("manifest", "verify", "--split", "eval-v3", "--limit", "3")
    assert verified.returncode == 0 and "verified 3 of 450 tasks, 0 mismatches" in verified.stdout
