"""The audit: its checks flip when the numbers say so, the committed report passes them
when they are recomputed (not read from its stored flags), and a live run reports and
exits accordingly."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from causal_gym.audit.report import (
    COVERAGE_BAND,
    REWARD_BAND,
    AuditReport,
    HackProbe,
    evaluate_checks,
)
from tests.support.cli import causal_gym_cli

COMMITTED = Path(str(resources.files("causal_gym").joinpath("audit_report.json")))


def committed() -> AuditReport:
    return AuditReport.model_validate_json(COMMITTED.read_text())


def parts(report: AuditReport) -> dict[str, Any]:
    """The report as the dict of models that evaluate_checks reads."""
    return {name: getattr(report, name) for name in type(report).model_fields if name != "checks"}


def verdicts(report_parts: dict[str, Any]) -> dict[str, bool]:
    return {c.name: c.passed for c in evaluate_checks(report_parts)}


def test_committed_report_passes_its_checks_when_recomputed() -> None:
    report = committed()
    assert report.per_family == 300 and report.namespace == "train"
    assert report.materialization.failed == 0 and report.materialization.materialized == 900
    recomputed = evaluate_checks(parts(report))
    assert [c.model_dump() for c in recomputed] == [c.model_dump() for c in report.checks]
    failing = [c.name for c in recomputed if not c.passed]
    assert not failing, failing
    assert len(recomputed) == 31
    for family in ("ate", "adjustment", "null_detect"):
        assert COVERAGE_BAND[0] <= report.honest[family].coverage <= COVERAGE_BAND[1]
        assert REWARD_BAND[0] <= report.honest[family].mean_reward <= REWARD_BAND[1]
    for suffix in ("width_sweep", "coverage", "rewards"):
        png = COMMITTED.with_name(f"audit_report_{suffix}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _with(report_parts: dict[str, Any], name: str, **changes: Any) -> dict[str, Any]:
    return {**report_parts, name: report_parts[name].model_copy(update=changes)}


@pytest.mark.parametrize(
    ("perturb", "check"),
    [
        (lambda p: _with(p, "materialization", failed=1), "all tasks materialized"),
        (
            lambda p: {
                **p,
                "honest": {
                    **p["honest"],
                    "ate": p["honest"]["ate"].model_copy(update={"coverage": 0.87}),
                },
            },
            "coverage in band (ate)",
        ),
        (
            lambda p: {
                **p,
                "honest": {
                    **p["honest"],
                    "null_detect": p["honest"]["null_detect"].model_copy(
                        update={"mean_reward": 0.91}
                    ),
                },
            },
            "honest reward in band (null_detect)",
        ),
        (
            lambda p: {
                **p,
                "width_sweep": {
                    **p["width_sweep"],
                    "adjustment": p["width_sweep"]["adjustment"].model_copy(
                        update={"argmax_level": 0.91}
                    ),
                },
            },
            "width sweep peaks at 0.90 (adjustment)",
        ),
        (
            lambda p: _with(
                p,
                "structural_null_narrow",
                narrow_mean_estimand_reward=p["structural_null_narrow"].honest_mean_estimand_reward,
            ),
            "1%-of-scale interval on structural nulls below honest",
        ),
        (
            lambda p: _with(p, "prior_only_null", mean_brier_skill=0.05),
            "prior-only forecast has Brier skill ~0",
        ),
        (
            lambda p: {
                **p,
                "hack_probes": {
                    **p["hack_probes"],
                    "diff_in_means": HackProbe(
                        mean_reward=0.99,
                        per_family={**p["hack_probes"]["diff_in_means"].per_family, "ate": 0.99},
                        share_of_tasks_beating_honest=1.0,
                    ),
                },
            },
            "diff_in_means below honest",
        ),
    ],
)
def test_each_check_fails_when_its_numbers_are_bad(perturb: Any, check: str) -> None:
    good = parts(committed())
    assert verdicts(good)[check] is True
    bad = verdicts(perturb(good))
    assert bad[check] is False
    # only the perturbed check (and, for a probe, its per-family twin) flips
    flipped = {name for name, ok in bad.items() if not ok}
    assert flipped <= {check, check.replace(" below honest", " below honest (ate)")}


def test_live_audit_run_reports_and_exits_by_its_checks(tmp_path: Path) -> None:
    """A small live run through the CLI: report fields, honest width = r, plots, and an
    exit code and FAIL lines that follow the recomputed checks."""
    out = tmp_path / "audit.json"
    proc = causal_gym_cli("audit", "--per-family", "4", "--out", str(out))
    live = AuditReport.model_validate_json(out.read_text())
    assert live.materialization.failed == 0
    assert live.honest["overall"].n == 12
    assert abs(live.honest["overall"].mean_width_ratio - 1.0) < 1e-9
    assert live.prior_only_null.n == 4
    recomputed = evaluate_checks(parts(live))
    assert [c.passed for c in recomputed] == [c.passed for c in live.checks]
    assert proc.returncode == (0 if all(c.passed for c in recomputed) else 1)
    for c in recomputed:
        assert (f"FAIL {c.name}" in proc.stderr) == (not c.passed), c.name
    for suffix in ("width_sweep", "coverage", "rewards"):
        assert (tmp_path / f"audit_{suffix}.png").stat().st_size > 1000
    assert json.loads(out.read_text())["per_family"] == 4
