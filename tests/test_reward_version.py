"""The reward version travels with every score: records, run folders, reports, baseline
rows, stream replies. A score of another version is never mixed in, and a folder
written before versions existed still reports the version it was scored with (1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from causal_gym.namespaces import SPLITS
from causal_gym.scoring.answer import episode_score
from causal_gym.versions import FROZEN_REWARD_VERSIONS, REWARD_VERSION, UNVERSIONED
from causal_gym.versions import reward_version as reward_version_of
from orchestrator.errors import RunFolderError
from orchestrator.records.chain import GENESIS, ChainTip, write_anchor
from orchestrator.records.layout import (
    RESULTS_FILE,
    RUN_FILE,
    RunIdentity,
    check_folder,
    create_folder,
)
from orchestrator.records.mac import mac_of, run_key
from orchestrator.records.read_back import read_back
from orchestrator.records.report import baseline_table
from orchestrator.records.summary import RunSummary, reward_version, summarize
from orchestrator.records.types import ScoredEpisode
from tests.conftest import cached_task
from tests.support.summaries import DEFAULTS, make_summary
from tests.test_read_back import TASKS, record


def identity(version: int = REWARD_VERSION) -> RunIdentity:
    return RunIdentity(
        run_id="run-a",
        config_digest="cfg",
        key_fingerprint="kfp",
        task_ids=TASKS,
        config={},
        reward_version=version,
    )


@pytest.mark.parametrize(
    ("task_id", "version"), [("train:ate:3", REWARD_VERSION), ("eval-v1:ate:3", 2)]
)
def test_every_score_carries_its_namespaces_version(task_id: str, version: int) -> None:
    """Train tasks score with the newest version; a frozen split keeps the one its
    baseline tables were made with, with or without a submission."""
    task = cached_task(task_id)
    answer = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
    assert episode_score(task, answer).fields()["reward_version"] == version
    assert episode_score(task, None).fields()["reward_version"] == version
    record = episode_score(task, answer).record
    assert record is not None and record.as_dict()["reward_version"] == version


def test_every_frozen_split_declares_its_reward_version() -> None:
    """A split frozen later must say which version scores it, or it would move with
    every new one."""
    assert set(FROZEN_REWARD_VERSIONS) == set(SPLITS)
    assert all(v <= REWARD_VERSION for v in FROZEN_REWARD_VERSIONS.values())
    assert reward_version_of("train") == REWARD_VERSION == 3
    with pytest.raises(ValueError):
        reward_version_of("eval-v9")


def test_a_line_without_a_reward_version_reads_as_version_1(
    tmp_path: Path, state_dir: Path
) -> None:
    """A results.jsonl line without reward_version (as lines were before versions);
    its MAC covers exactly the fields it has, so it verifies, and it reads as 1."""
    out = tmp_path / "run"
    create_folder(out, identity(UNVERSIONED))
    secret = run_key("run-a")
    fields = {**record(TASKS[0]).model_dump(mode="json", exclude={"mac"}), "prev": GENESIS}
    del fields["reward_version"]
    mac = mac_of(fields, secret)
    write_anchor("run-a", ChainTip(1, mac))
    line = json.dumps({**fields, "mac": mac})
    (out / RESULTS_FILE).write_text(line + "\n")
    back = read_back(out)
    assert not back.refused and back.records[0].reward_version == UNVERSIONED
    labels = {
        k: DEFAULTS[k]
        for k in (
            "run_id",
            "agent",
            "model",
            "provider",
            "sample",
            "split",
            "sandbox",
            "key_fingerprint",
            "config_digest",
        )
    }
    assert summarize(list(back.records), labels).reward_version == UNVERSIONED


def test_an_old_run_folder_reports_its_own_version_and_refuses_a_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    create_folder(out, identity())
    text = json.loads((out / RUN_FILE).read_text())
    del text["reward_version"]  # what a run.json from before versions holds
    (out / RUN_FILE).write_text(json.dumps(text))
    existing = RunIdentity.model_validate_json((out / RUN_FILE).read_text())
    assert existing.reward_version == UNVERSIONED
    with pytest.raises(
        RunFolderError, match=rf"scored with reward version 1; .* version {REWARD_VERSION}"
    ):
        check_folder(out, identity(), resume=True)
    assert check_folder(out, identity(UNVERSIONED), resume=True).run_id == "run-a"


def test_a_budget_added_later_leaves_an_older_runs_identity_alone() -> None:
    """A run begun before `tool_output_chars` existed resumes after the upgrade: at its
    default the budget is not in the identity digest (the golden digest is this config's
    at the commit before the field, 8f447e8); set to anything else it is another run."""
    from orchestrator.run.config import load_config

    base = {"split": "eval-v1", "n": 4, "agent": "reference"}
    assert load_config(None, base).identity_digest() == "5c1cfc1afc133522"
    explicit = load_config(None, {**base, "tool_output_chars": 16_000})
    assert explicit.identity_digest() == "5c1cfc1afc133522"
    assert load_config(None, {**base, "tool_output_chars": 3000}).identity_digest() != (
        "5c1cfc1afc133522"
    )


def test_a_report_never_averages_two_versions() -> None:
    old, new = record(TASKS[0], reward_version=1), record(TASKS[1], reward_version=2)
    with pytest.raises(ValueError, match="mix reward versions 1, 2"):
        reward_version([old, new])
    assert reward_version([new, new]) == 2 and reward_version([], default=7) == 7


def summary(version: int | None) -> RunSummary:
    base: dict[str, Any] = {"episodes": 1, "coverage": 1.0, "by_family": {"ate": 0.5}}
    return make_summary(**base) if version is None else make_summary(**base, reward_version=version)


def test_every_baseline_row_names_its_version() -> None:
    header, rule, *rows = "\n".join(baseline_table([summary(2), summary(None)])).splitlines()
    assert header.rstrip(" |").endswith("Reward version")
    assert rows[0].endswith("| 2 |") and rows[1].endswith("| 1 |")  # an old summary: 1
    assert rule.count("---") == header.count("|") - 1


def test_records_refuse_a_nonsense_version() -> None:
    with pytest.raises(ValueError, match="reward_version"):
        ScoredEpisode(**{**record(TASKS[0]).model_dump(), "reward_version": 0})
