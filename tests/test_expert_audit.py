"""The expert tier's audit: the committed report passes its checks when they are
recomputed from the file, each check flips when its numbers are bad, a live run
through the CLI reports and exits by its checks, and the baseline table gains the
expert-tier column."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from causal_gym.audit.expert.report import (
    LINEAR_COVERAGE_LIMIT,
    ExpertReport,
    evaluate,
)
from causal_gym.audit.suite import suite
from orchestrator.records.report import EXPERT_COLUMN, baseline_table
from orchestrator.records.summary import RunSummary
from tests.support.audit_checks import (
    assert_cli_follows_checks,
    assert_only_this_check_fails,
    probe_above_honest,
    sweep_beats_90,
    with_family,
)
from tests.support.cli import causal_gym_cli
from tests.support.summaries import make_summary

SUITE = suite("expert")
FAMILIES = ("ate", "adjustment", "null_detect")


def committed() -> ExpertReport:
    report = SUITE.load_committed()
    assert isinstance(report, ExpertReport)
    return report


def test_the_committed_expert_report_shows_linear_ols_punished() -> None:
    """The suite-wide checks are in test_audit_suites.py; here, what only the expert
    report holds."""
    report = committed()
    # the expert tier as streams serve it (train, generator 3), at least 400 tasks a family
    assert report.namespace == "train" and report.per_family * len(report.keys) >= 400
    assert tuple(report.families) == FAMILIES
    for family, s in report.families.items():
        assert s.linear_coverage < LINEAR_COVERAGE_LIMIT, family
        assert set(report.hack_probes[family]) >= {"linear_ols", "diff_in_means"}
        # the bound is what no analyst beats: the reference's width sits above it
        assert s.mean_width_ratio > 1.0, family
    assert report.prior is None  # no whole blocks of 20 in a keyed fifth of the ids
    assert set(report.bayes_prior) == set(FAMILIES) and set(report.leakage) == {"null_detect"}


def _low_coverage(p: dict[str, Any], family: str) -> dict[str, Any]:
    n = p["families"][family].n
    return with_family(p, family, covered=n * 8 // 10, coverage=0.8)


def _linear_covers(p: dict[str, Any], family: str) -> dict[str, Any]:
    n = p["families"][family].n
    return with_family(p, family, linear_covered=n * 9 // 10, linear_coverage=0.9)


def _generator_pays(p: dict[str, Any]) -> dict[str, Any]:
    gain = p["bayes_prior"]["ate"].model_copy(update={"diff_mean": 0.02})
    return {**p, "bayes_prior": {**p["bayes_prior"], "ate": gain}}


def _metadata_leaks(p: dict[str, Any]) -> dict[str, Any]:
    leak = p["leakage"]["null_detect"].model_copy(update={"auc": 0.7})
    return {**p, "leakage": {"null_detect": leak}}


PERTURBATIONS = [
    (lambda p: _low_coverage(p, "ate"), "coverage is 0.9 (ate)"),
    (lambda p: sweep_beats_90(p, "adjustment"), "no interval level beats 0.90 (adjustment)"),
    (lambda p: _linear_covers(p, "null_detect"), "linear OLS coverage below 0.6 (null_detect)"),
    (lambda p: probe_above_honest(p, "ate", "linear_ols"), "linear_ols below honest (ate)"),
    (
        lambda p: probe_above_honest(p, "adjustment", "reference_halved_interval"),
        "reference_halved_interval below honest (adjustment)",
    ),
    (_generator_pays, "knowing the generator gains at most 0.005 a task (ate)"),
    (_metadata_leaks, "staged metadata does not tell a structural null (null_detect)"),
]


@pytest.mark.parametrize(("perturb", "check"), PERTURBATIONS)
def test_each_check_fails_when_its_numbers_are_bad(perturb: Any, check: str) -> None:
    assert_only_this_check_fails(evaluate, committed().parts(), perturb, check)


@pytest.mark.slow
def test_live_expert_audit_reports_and_exits_by_its_checks(tmp_path: Path) -> None:
    """The smallest run the CLI takes (20 per family, one key): every task expert,
    the three families reported, plots, and an exit code and FAIL lines that follow
    the recomputed checks (a run this small is underpowered, and says so)."""
    out = tmp_path / "audit.json"
    proc = causal_gym_cli(
        "audit", "--families", "eval-expert-v1", "--per-family", "20", "--keys", "1",
        "--workers", "2", "--out", str(out),
    )  # fmt: skip
    live = ExpertReport.model_validate_json(out.read_text())
    assert tuple(live.families) == FAMILIES and live.keys[0].materialized == 60
    assert_cli_follows_checks(SUITE, live, proc, tmp_path)


def test_bad_expert_audit_arguments_are_one_line_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "a.json")
    unknown = causal_gym_cli("audit", "--families", "expert", "--out", out)
    assert unknown.returncode == 2
    assert "accepted are eval-v1, eval-v2, eval-expert-v1, eval-v3" in unknown.stderr
    mixed = causal_gym_cli(
        "audit", "--families", "eval-expert-v1", "--namespace", "eval-v1", "--out", out
    )
    assert mixed.returncode == 2 and "audits train or eval-expert-v1 tasks" in mixed.stderr
    assert not (tmp_path / "a.json").exists()


def _summary(model: str, by_tier: dict[str, float]) -> RunSummary:
    return make_summary(
        model=model, provider="scripted", sample="train, 30 tasks", episodes=30,
        by_family={"ate": 0.5}, by_tier=by_tier,
    )  # fmt: skip


def test_the_baseline_table_gains_an_expert_column_when_a_run_has_expert_tasks() -> None:
    plain = baseline_table([_summary("a", {"easy": 0.8})])
    assert EXPERT_COLUMN not in plain[0]
    mixed = baseline_table([_summary("a", {"easy": 0.8, "expert": 0.61}), _summary("b", {})])
    assert EXPERT_COLUMN in mixed[0]
    header = [c.strip() for c in mixed[0].split("\n")[0].strip("|").split("|")]
    first = [c.strip() for c in mixed[1].strip("|").split("|")]
    second = [c.strip() for c in mixed[2].strip("|").split("|")]
    column = header.index(EXPERT_COLUMN)
    assert first[column] == "0.6100" and second[column] == ""
