"""The audit: its tests have the false-alarm rates they claim, its checks flip when the
numbers say so, the committed report passes them when they are recomputed (not read
from its stored flags), and a live run reports and exits accordingly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from causal_gym.audit import stats
from causal_gym.audit.seed.report import SeedReport, evaluate
from causal_gym.audit.suite import suite
from tests.support.audit_checks import assert_cli_follows_checks, assert_only_this_check_fails
from tests.support.cli import causal_gym_cli

SEED = suite("seed")


def committed() -> SeedReport:
    report = SEED.load_committed()
    assert isinstance(report, SeedReport)
    return report


def test_the_binomial_check_has_the_false_alarm_rate_it_states() -> None:
    """Exact: the stated rate is the binomial mass outside the acceptance region, below
    alpha; and by simulation, calibrated coverage fails about that often while a
    coverage of 0.85 is caught at least 95% of the time at audit size."""
    alpha = 0.001
    lo, hi, rate = stats.binomial_acceptance(1200, 0.90, alpha)
    assert rate == pytest.approx(binom.cdf(lo - 1, 1200, 0.9) + binom.sf(hi, 1200, 0.9))
    assert 0 < rate <= alpha
    draws = np.random.default_rng(13).binomial(1200, 0.90, 200_000)
    failed = np.mean((draws < lo) | (draws > hi))
    assert failed == pytest.approx(rate, abs=4 * np.sqrt(rate / 200_000) + 1e-5)
    power = binom.cdf(lo - 1, 1200, 0.85) + binom.sf(hi, 1200, 0.85)
    assert power > 0.95


def test_demonstrations_report_their_power_shortfall() -> None:
    clear = stats.shown_below(-0.2, 0.3, 1200, 0.05)
    assert clear.passed and clear.false_alarm < 1e-12
    marginal = stats.shown_below(-0.01, 0.3, 400, 0.05)
    assert not marginal.passed and marginal.false_alarm > 0.5
    tie = stats.no_better_than({0.88: (0.0, 0.01), 0.92: (0.003, 0.01)}, 1200, 0.001)
    assert not tie.passed  # 0.92 beats 0.90 by 10 standard errors


def test_the_committed_seed_report_measures_every_group() -> None:
    """The suite-wide checks are in test_audit_suites.py; here, what only the seed
    report holds."""
    report = committed()
    assert report.namespace == "train" and report.per_family >= 400
    # what knowing the generator is worth, what staged metadata tells, and the more
    # efficient analyst: measured in every family they apply to
    assert set(report.bayes_prior) == {"ate", "adjustment", "null_detect", "overall"}
    assert set(report.leakage) == {"null_detect"}
    assert set(report.efficient_ols) == {"ate", "adjustment"}
    assert {"ate", "adjustment", "null_detect", "overall"} <= set(report.third_party)
    per_key = {f"ate/{k.label}" for k in report.keys}
    assert per_key <= set(report.honest)


def _with(report_parts: dict[str, Any], name: str, group: str | None, **changes: Any) -> dict:
    value = report_parts[name]
    if group is None:
        return {**report_parts, name: value.model_copy(update=changes)}
    return {**report_parts, name: {**value, group: value[group].model_copy(update=changes)}}


def _probe(report_parts: dict[str, Any], probe: str, group: str, diff: float) -> dict:
    hack = report_parts["hack_probes"][probe]
    paired = hack.by_group[group].model_copy(update={"diff_mean": diff})
    changed = hack.model_copy(update={"by_group": {**hack.by_group, group: paired}})
    return {**report_parts, "hack_probes": {**report_parts["hack_probes"], probe: changed}}


def _third(report_parts: dict[str, Any], group: str, **changes: Any) -> dict:
    third = report_parts["third_party"][group]
    reward = third.reward.model_copy(update=changes.pop("reward", {}))
    changed = third.model_copy(update={"reward": reward, **changes})
    return {**report_parts, "third_party": {**report_parts["third_party"], group: changed}}


def _sweep(report_parts: dict[str, Any]) -> dict:
    sweep = report_parts["width_sweep"]["adjustment"]
    diffs = list(sweep.diff_mean_vs_90)
    diffs[sweep.levels.index(0.91)] = 0.05
    return _with(report_parts, "width_sweep", "adjustment", diff_mean_vs_90=tuple(diffs))


def _keys(report_parts: dict[str, Any]) -> dict:
    first = report_parts["keys"][0].model_copy(update={"failed_ids": ("train:ate:7",)})
    return {**report_parts, "keys": (first, *report_parts["keys"][1:])}


def _narrow(report_parts: dict[str, Any]) -> dict:
    narrow = report_parts["structural_null_narrow"]
    estimand = narrow.estimand.model_copy(update={"diff_mean": 0.01})
    return _with(report_parts, "structural_null_narrow", None, estimand=estimand)


PERTURBATIONS = [
    (_keys, "all tasks materialized (default)"),
    (
        lambda p: _with(p, "honest", "ate/default", covered=p["honest"]["ate/default"].n * 8 // 10),
        "coverage is 0.9 (ate/default)",
    ),
    (
        lambda p: _with(p, "honest", "null_detect", mean_reward=0.95, sd_reward=0.1),
        "honest reward in (0.75, 0.9) (null_detect)",
    ),
    (_sweep, "no interval level beats 0.90 (adjustment)"),
    (
        lambda p: _probe(p, "diff_in_means", "ate", 0.05),
        "diff_in_means below honest (ate)",
    ),
    (_narrow, "1%-of-scale oracle interval on structural nulls below honest (estimand reward)"),
    (
        lambda p: _with(p, "prior_only_null", None, max_abs_block_brier_skill=0.05),
        "prior-only forecast has Brier skill exactly 0 on whole blocks",
    ),
    (
        lambda p: _third(p, "ate", reward={"diff_mean": -0.08}),
        "AIPW reward within 0.03 of the reference (ate)",
    ),
    (
        lambda p: _third(p, "adjustment", covered=p["third_party"]["adjustment"].reward.n // 2),
        "AIPW coverage in (0.86, 0.94) (adjustment)",
    ),
]


@pytest.mark.parametrize(("perturb", "check"), PERTURBATIONS)
def test_each_check_fails_when_its_numbers_are_bad(perturb: Any, check: str) -> None:
    assert_only_this_check_fails(evaluate, committed().parts(), perturb, check)


def test_live_audit_run_reports_and_exits_by_its_checks(tmp_path: Path) -> None:
    """A small live run through the CLI, two keys and two workers: report fields,
    honest width = r, plots, and an exit code and FAIL lines that follow the
    recomputed checks (a run this small is underpowered, and says so)."""
    out = tmp_path / "audit.json"
    proc = causal_gym_cli(
        "audit", "--per-family", "20", "--keys", "2", "--workers", "2", "--out", str(out)
    )
    live = SeedReport.model_validate_json(out.read_text())
    assert [k.label for k in live.keys] == ["default", "random-1"]
    assert all(k.materialized == 60 for k in live.keys)
    assert live.honest["overall"].n == 120 and live.honest["ate/random-1"].n == 20
    # honest width = r on linear tasks; on expert ones r is the efficiency bound, below it
    if live.expert_tasks == 0:
        assert abs(live.honest["overall"].mean_width_ratio - 1.0) < 1e-9
    else:
        assert live.honest["overall"].mean_width_ratio > 1.0
    assert live.prior_only_null.n == 40 and live.prior_only_null.whole_blocks == 2
    assert_cli_follows_checks(SEED, live, proc, tmp_path)
    assert json.loads(out.read_text())["per_family"] == 20


def test_bad_audit_arguments_are_one_line_errors(tmp_path: Path) -> None:
    small = causal_gym_cli("audit", "--per-family", "5", "--out", str(tmp_path / "a.json"))
    assert small.returncode != 0 and "20" in small.stderr
    frozen = causal_gym_cli(
        "audit", "--namespace", "eval-v1", "--keys", "2", "--out", str(tmp_path / "a.json")
    )
    assert frozen.returncode != 0 and "--keys 1" in frozen.stderr
    assert not (tmp_path / "a.json").exists()
