"""`causal-gym score` and `causal-gym reference` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from causal_gym.scoring.reward import score_submission
from causal_gym.scoring.validate import validate_submission
from causal_gym.versions import REWARD_VERSION
from tests.conftest import FAMILIES, cached_task
from tests.support.cli import causal_gym_cli as cli


@pytest.mark.parametrize("family", FAMILIES)
def test_reference_then_score_matches_the_library(tmp_path: Path, family: str) -> None:
    task_id = f"train:{family}:11"
    task = cached_task(task_id)
    for name, data in task.public.files.items():
        (tmp_path / name).write_bytes(data)
    ref = cli("reference", str(tmp_path))
    assert ref.returncode == 0, ref.stderr
    answer = json.loads(ref.stdout)
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer))
    scored = cli("score", task_id, str(path))
    assert scored.returncode == 0, scored.stderr
    record = json.loads(scored.stdout)
    public = task.public
    checked = validate_submission(public.family, answer, public.columns, public.estimands)
    expected = score_submission(task.hidden, checked.submission)
    assert record["reward"] == pytest.approx(expected.reward, rel=1e-12)
    assert record["width_ratio"] == pytest.approx(expected.width_ratio, rel=1e-12)
    # the honest width over the task's anchor; obs_vs_rct's anchor is the pool of both
    # files, and a reference that doubts the extract leans on the trial, up to 2x wider
    assert 0.95 < record["width_ratio"] < (2.2 if family == "obs_vs_rct" else 1.5)
    assert record["reward_version"] == REWARD_VERSION
    for key in ("reward", "estimand_reward", "clipped_reward", "covered", "width_ratio"):
        assert key in record
    assert ("validity" in record) == (family == "adjustment")
    assert ("brier_skill" in record) == (family in ("null_detect", "obs_vs_rct"))
    if family == "adjustment":
        assert record["validity"] == 1.0


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    missing = cli("score", "train:ate:1", str(tmp_path / "absent.json"))
    assert missing.returncode == 2 and "cannot read submission" in missing.stderr
    answer = tmp_path / "a.json"
    answer.write_text('{"estimate": 0, "ci_lower": -1, "ci_upper": 1}')
    outside = cli("score", "eval-v1:ate:170", str(answer))
    assert outside.returncode == 2
    assert "not in the frozen eval-v1 manifest" in outside.stderr
    assert "eval-v1:ate:0-169" in outside.stderr
    no_dir = cli("reference", str(tmp_path / "nowhere"))
    assert no_dir.returncode == 2 and "cannot analyse" in no_dir.stderr


def test_wrong_family_shape_is_exit_1(tmp_path: Path) -> None:
    answer = tmp_path / "a.json"
    answer.write_text('{"estimate": 0, "ci_lower": -1, "ci_upper": 1}')
    proc = cli("score", "train:null_detect:2", str(answer))
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["errors"] == ["effect_probability: Field required"]
