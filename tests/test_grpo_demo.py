"""The committed GRPO demo (scripts/grpo_demo.py, docs/demo/grpo_run.json): its held-out
evaluation is paired (every model answered the same tasks, in the same order) and
held out (no task of it was trained on: data.csv digests), every number it reports is
recomputed from its per-task rows, the figure was drawn from this JSON (the PNG carries
the digest of what it plots), and the inspect logs beside it hold the same scores."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from scripts.grpo_plot import source_digest

DEMO = Path(__file__).resolve().parents[1] / "docs" / "demo"


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return dict(json.loads((DEMO / "grpo_run.json").read_text()))


def test_the_held_out_evaluation_is_paired_and_never_trained_on(report: dict[str, Any]) -> None:
    evaluations = report["evaluations"]
    assert [e["model"] for e in evaluations][1:] == ["after SFT", "after SFT + GRPO"]
    rows = [[(t["task_digest"], t["family"]) for t in e["per_task"]] for e in evaluations]
    assert all(r == rows[0] for r in rows)
    digests = [d for d, _ in rows[0]]
    assert len(set(digests)) == len(digests) >= 100
    trained = {d for step in report["grpo"] for d in step["task_digests"]}
    assert len(trained) >= len(report["grpo"]) and not trained & set(digests)
    assert report["source"] == "stream" and len(report["grpo"]) >= 40


def test_every_reported_number_comes_from_the_per_task_rows(report: dict[str, Any]) -> None:
    for e in report["evaluations"]:
        rewards = [t["clipped_reward"] for t in e["per_task"]]
        n = len(rewards)
        assert e["tasks"] == n
        assert e["valid_share"] == pytest.approx(sum(t["valid"] for t in e["per_task"]) / n)
        assert e["mean_clipped_reward"] == pytest.approx(statistics.fmean(rewards))
        assert e["mean_clipped_reward_se"] == pytest.approx(statistics.stdev(rewards) / n**0.5)
        assert all(r == -1.0 for r, t in zip(rewards, e["per_task"], strict=True) if not t["valid"])
    sft, grpo = ({t["task_digest"]: t for t in e["per_task"]} for e in report["evaluations"][1:])
    paired = report["paired_grpo_minus_sft"]
    diffs = [grpo[d]["clipped_reward"] - sft[d]["clipped_reward"] for d in sft]
    assert paired["mean"] == pytest.approx(statistics.fmean(diffs))
    assert paired["se"] == pytest.approx(statistics.stdev(diffs) / math.sqrt(len(diffs)))
    for family, stats in paired["families"].items():
        mine = [grpo[d]["clipped_reward"] - sft[d]["clipped_reward"]
                for d in sft if sft[d]["family"] == family]  # fmt: skip
        assert stats["tasks"] == len(mine)
        assert stats["mean"] == pytest.approx(statistics.fmean(mine))
    assert sum(s["tasks"] for s in paired["families"].values()) == len(diffs)


def test_the_figure_was_drawn_from_this_json(report: dict[str, Any]) -> None:
    from PIL import Image

    with Image.open(DEMO / "grpo_curve.png") as figure:
        assert figure.info["Source-SHA256"] == source_digest(report)


def test_the_inspect_logs_hold_the_same_scores(report: dict[str, Any]) -> None:
    from inspect_ai.log import read_eval_log

    for name, e in zip(("base", "sft", "grpo"), report["evaluations"], strict=True):
        log = read_eval_log(str(DEMO / "grpo-inspect" / f"{name}.eval"))
        assert log.samples is not None
        scores = [s.scores["clipped_reward"].value for s in log.samples]
        assert scores == [t["clipped_reward"] for t in e["per_task"]]
        assert [s.metadata["task_digest"] for s in log.samples] == [
            t["task_digest"] for t in e["per_task"]
        ]
