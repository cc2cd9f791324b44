"""The estimand suite (eval-v2's families): the committed report tests every
estimand and family probe, each check flips when its numbers are bad, and a
live run through the CLI reports and exits by its checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from causal_gym.audit.estimand.report import EstimandReport, evaluate
from causal_gym.audit.suite import suite
from tests.support.audit_checks import (
    assert_cli_follows_checks,
    assert_only_this_check_fails,
    probe_above_honest,
    sweep_beats_90,
    with_family,
)
from tests.support.cli import causal_gym_cli

SUITE = suite("estimand")
FAMILIES = ("cate", "mediation", "obs_vs_rct")


def committed() -> EstimandReport:
    report = SUITE.load_committed()
    assert isinstance(report, EstimandReport)
    return report


def test_the_committed_estimand_report_tests_every_estimand() -> None:
    """The suite-wide checks are in test_audit_suites.py; here, what only the
    estimand report holds."""
    report = committed()
    assert report.namespace == "train"
    assert report.per_family >= 400 and tuple(report.families) == FAMILIES
    # every estimand's coverage is tested, and every family's own probes were run
    assert set(report.families["mediation"].coverage) >= {"direct", "indirect", "total"}
    assert "first_level" in report.families["cate"].coverage
    assert set(report.hack_probes["obs_vs_rct"]) >= {"observational_only", "trial_only"}
    assert set(report.forecasts) == {"obs_vs_rct"}
    # Generator 6's train tasks (mediation's smooth indirect prior) under reward
    # version 3 (anchors from the task), with the checks of issue 24: obs_vs_rct's
    # confounding is a real test, and knowing the generator buys little.
    assert report.reward_version == 3 and report.generator_version == 6
    assert set(report.confounding) == {"obs_vs_rct"} and set(report.bayes_prior) == set(FAMILIES)


def _coverage(p: dict[str, Any], family: str, name: str) -> dict[str, Any]:
    c = p["families"][family].coverage[name]
    low = c.model_copy(update={"covered": c.n * 8 // 10, "coverage": 0.8})
    return with_family(p, family, coverage={**p["families"][family].coverage, name: low})


def _forecast(p: dict[str, Any]) -> dict[str, Any]:
    f = p["forecasts"]["obs_vs_rct"]
    gap = f.prior_minus_honest.model_copy(update={"diff_mean": 0.02})
    return {**p, "forecasts": {"obs_vs_rct": f.model_copy(update={"prior_minus_honest": gap})}}


def _confounding(p: dict[str, Any], **changes: float) -> dict[str, Any]:
    c = p["confounding"]["obs_vs_rct"]
    return {**p, "confounding": {"obs_vs_rct": c.model_copy(update=changes)}}


def _bayes_gain(p: dict[str, Any], family: str, gain: float) -> dict[str, Any]:
    g = p["bayes_prior"][family].model_copy(update={"diff_mean": gain})
    return {**p, "bayes_prior": {**p["bayes_prior"], family: g}}


PERTURBATIONS = [
    (lambda p: _coverage(p, "mediation", "indirect"), "coverage is 0.9 (mediation indirect)"),
    (lambda p: _coverage(p, "cate", "first_level"), "coverage is 0.9 (cate first_level)"),
    (
        lambda p: with_family(p, "obs_vs_rct", mean_reward=0.97, sd_reward=0.05),
        "honest reward in (0.75, 0.9) (obs_vs_rct)",
    ),
    (lambda p: sweep_beats_90(p, "cate"), "no interval level beats 0.90 (cate)"),
    (
        lambda p: probe_above_honest(p, "mediation", "mediator_as_confounder"),
        "mediator_as_confounder below honest (mediation)",
    ),
    (
        lambda p: probe_above_honest(p, "cate", "pooled_for_every_level"),
        "pooled_for_every_level below honest (cate)",
    ),
    (_forecast, "the prior-only forecast's Brier skill below honest (obs_vs_rct)"),
    (
        lambda p: _confounding(p, auc_trial_sd=0.30),
        "trial.csv's residual SD tells confounding with AUC below 0.6 (obs_vs_rct)",
    ),
    (
        lambda p: _confounding(p, brier_skill_mean=0.95, brier_skill_sd=0.1),
        "the reference's Brier skill in (0.3, 0.8) (obs_vs_rct)",
    ),
    (
        lambda p: _bayes_gain(p, "mediation", 0.012),
        "knowing the generator gains at most 0.005 a task (mediation)",
    ),
]


@pytest.mark.parametrize(("perturb", "check"), PERTURBATIONS)
def test_each_check_fails_when_its_numbers_are_bad(perturb: Any, check: str) -> None:
    assert_only_this_check_fails(evaluate, committed().parts(), perturb, check)


@pytest.mark.slow
def test_live_estimand_audit_reports_and_exits_by_its_checks(tmp_path: Path) -> None:
    """The smallest run the CLI takes (20 per family, one key): every family and
    estimand reported, the honest width above the task's anchor r (reward version 3: r
    is the 5% quantile of the efficient estimator's own width; 1.03 cate, 1.09-1.10
    mediation and 1.67 obs_vs_rct on average at 400 a family), plots, exit code and
    FAIL lines that follow the recomputed checks (a run this small is underpowered,
    and says so)."""
    out = tmp_path / "audit.json"
    proc = causal_gym_cli(
        "audit", "--families", "eval-v2", "--per-family", "20", "--keys", "1",
        "--workers", "2", "--out", str(out),
    )  # fmt: skip
    live = EstimandReport.model_validate_json(out.read_text())
    assert tuple(live.families) == FAMILIES and live.keys[0].materialized == 60
    assert all(1.0 < s.mean_width_ratio < 2.5 for s in live.families.values())
    assert_cli_follows_checks(SUITE, live, proc, tmp_path)


def test_bad_estimand_audit_arguments_are_one_line_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "a.json")
    unknown = causal_gym_cli("audit", "--families", "eval-v4", "--out", out)
    assert unknown.returncode == 2 and "accepted are eval-v1, eval-v2" in unknown.stderr
    mixed = causal_gym_cli("audit", "--families", "eval-v1", "--namespace", "eval-v2", "--out", out)
    assert mixed.returncode == 2 and "use --families eval-v2" in mixed.stderr
    assert not (tmp_path / "a.json").exists()
