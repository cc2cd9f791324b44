"""Checks of the analyst run's record, moved into tests/ when the record exists (it does
not yet: the GRPO run is in progress, docs/demo/analyst/amendments.md).

The committed analyst-toolset run (issue 53; scripts/analyst_run.sh,
docs/demo/analyst/): its held-out evaluation answered exactly the registered tasks,
every arm the same ones in the same order, none of them trained on; every number it
reports is recomputed from its per-task rows; the registered rules are applied as
registered; the figure was drawn from this JSON (the PNG carries the digest of what it
plots); and the inspect logs hold the same scores."""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from scripts.analyst_plot import source_digest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "demo" / "analyst"


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    return dict(json.loads((DOCS / "analyst_run.json").read_text()))


@pytest.fixture(scope="module")
def prereg() -> dict[str, Any]:
    return dict(json.loads((DOCS / "preregistration.json").read_text()))


def test_the_record_is_of_the_registered_run(run: dict[str, Any], prereg: dict[str, Any]) -> None:
    assert (
        run["preregistration_sha256"]
        == hashlib.sha256((DOCS / "preregistration.json").read_bytes()).hexdigest()
    )
    assert run["gate"]["pass"] and all(c["pass"] for c in run["gate"]["checks"].values())
    recipe = prereg["recipe"]
    for name in ("grpo", "placebo"):
        assert run[name]["recipe"] == recipe and run[name]["finished"]
        assert run[name]["source"] == "stream"
        steps = [s["step"] for s in run[name]["steps"]]
        assert steps == list(range(1, len(steps) + 1))
    grpo = run["grpo"]
    go = grpo["go_no_go"]
    assert go["step"] == recipe["go_step"]
    assert go["go"] == (go["p_now"] - go["p_start"] >= recipe["go_min_rise"])
    registered = recipe["steps"] if go["go"] else recipe["go_step"]
    assert len(grpo["steps"]) == registered
    assert len(run["placebo"]["steps"]) == recipe["placebo_steps"]
    assert (DOCS / "probe_prompts.json").read_bytes()
    probes = hashlib.sha256((DOCS / "probe_prompts.json").read_bytes()).hexdigest()
    assert probes == prereg["probe_prompts_sha256"]


def test_every_arm_answered_the_registered_tasks_and_none_was_trained_on(
    run: dict[str, Any], prereg: dict[str, Any]
) -> None:
    registered = [(t["task_digest"], t["family"]) for t in prereg["held_out"]["tasks"]]
    evaluation = run["evaluation"]
    assert evaluation["key_fingerprint"] == prereg["held_out"]["key_fingerprint"]
    for arm, rows in evaluation["per_task"].items():
        assert [(r["task_digest"], r["family"]) for r in rows] == registered, arm
    held_out = {d for d, _ in registered}
    assert len(held_out) == len(registered) == prereg["recipe"]["held_out_tasks"]
    for name in ("grpo", "placebo"):
        trained = {d for step in run[name]["steps"] for d in step["task_digests"]}
        per_step = prereg["recipe"]["prompts_per_step"]
        assert len(trained) >= per_step * len(run[name]["steps"]) // 2
        assert not trained & held_out


def test_every_reported_number_comes_from_the_per_task_rows(run: dict[str, Any]) -> None:
    evaluation = run["evaluation"]
    rows = evaluation["per_task"]
    for arm, summary in evaluation["arms"].items():
        rewards = [r["clipped_reward"] for r in rows[arm]]
        n = len(rewards)
        assert summary["tasks"] == n
        assert summary["valid_share"] == pytest.approx(sum(r["valid"] for r in rows[arm]) / n)
        assert summary["mean_clipped_reward"] == pytest.approx(statistics.fmean(rewards))
        assert summary["mean_clipped_reward_se"] == pytest.approx(
            statistics.stdev(rewards) / n**0.5
        )
        assert all(r["clipped_reward"] == -1.0 for r in rows[arm] if not r["valid"])
    start = rows["start"]
    for arm, paired in evaluation["paired_vs_start"].items():
        diffs = [
            a["clipped_reward"] - b["clipped_reward"] for a, b in zip(rows[arm], start, strict=True)
        ]
        assert paired["mean"] == pytest.approx(statistics.fmean(diffs))
        assert paired["se"] == pytest.approx(statistics.stdev(diffs) / math.sqrt(len(diffs)))
        for family, stats in paired["families"].items():
            mine = [d for d, r in zip(diffs, start, strict=True) if r["family"] == family]
            assert stats["tasks"] == len(mine) and stats["mean"] == pytest.approx(
                statistics.fmean(mine)
            )
    gain = evaluation["paired_vs_start"]["grpo"]
    valid = evaluation["paired_valid_vs_start"]["grpo"]
    verdict = evaluation["verdict"]["success"]
    assert verdict["above_2_se"] == (gain["mean"] > 2 * gain["se"])
    assert verdict["valid_not_down"] == (valid["mean"] + 2 * valid["se"] >= 0)
    placebo = evaluation["paired_vs_start"]["placebo"]
    assert evaluation["verdict"]["placebo_does_not_gain"] == (
        not placebo["mean"] > 2 * placebo["se"]
    )
    context = evaluation["context"]["grpo"]
    line = [r for r in rows["grpo"] if r["nonlinear"]]
    plain = [r for r in rows["grpo"] if not r["nonlinear"]]
    aipw = sum(r["decisions"]["estimator"] == "aipw" for r in line) / len(line)
    aipw -= sum(r["decisions"]["estimator"] == "aipw" for r in plain) / len(plain)
    assert context["tier_line"]["difference"] == pytest.approx(aipw)


def test_the_figure_was_drawn_from_this_json(run: dict[str, Any]) -> None:
    from PIL import Image

    with Image.open(DOCS / "analyst_curve.png") as figure:
        assert figure.info["Source-SHA256"] == source_digest(run)


def test_the_inspect_logs_hold_the_same_scores(run: dict[str, Any]) -> None:
    from inspect_ai.log import read_eval_log

    for arm in ("start", "grpo", "sft-reference", "placebo"):
        log = read_eval_log(str(DOCS / "inspect" / f"{arm}.eval"))
        assert log.samples is not None
        rows = run["evaluation"]["per_task"][arm]
        assert [s.scores["clipped_reward"].value for s in log.samples] == [
            r["clipped_reward"] for r in rows
        ]
        assert [s.metadata["task_digest"] for s in log.samples] == [r["task_digest"] for r in rows]
