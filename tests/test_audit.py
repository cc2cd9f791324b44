"""The committed audit report meets its targets, and a live audit run reproduces its shape."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

from causal_gym.audit.report import COVERAGE_BAND, REWARD_BAND, AuditReport

COMMITTED = Path(str(resources.files("causal_gym").joinpath("audit_report.json")))


def test_committed_report_passes_every_check() -> None:
    report = AuditReport.model_validate_json(COMMITTED.read_text())
    assert report.per_family == 300 and report.namespace == "train"
    assert report.materialization.failed == 0 and report.materialization.materialized == 900
    failing = [c.name for c in report.checks if not c.passed]
    assert not failing, failing
    for family in ("ate", "adjustment", "null_detect"):
        assert COVERAGE_BAND[0] <= report.honest[family].coverage <= COVERAGE_BAND[1]
        assert REWARD_BAND[0] <= report.honest[family].mean_reward <= REWARD_BAND[1]
        assert report.width_sweep[family].argmax_level == 0.90
    for probe in report.hack_probes.values():
        assert probe.mean_reward < report.honest["overall"].mean_reward
    for suffix in ("width_sweep", "coverage", "rewards"):
        png = COMMITTED.with_name(f"audit_report_{suffix}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_live_audit_run_writes_report_and_plots(tmp_path: Path) -> None:
    """A small live run through the CLI: report fields, honest width = r, plots."""
    out = tmp_path / "audit.json"
    proc = subprocess.run(
        [sys.executable, "-m", "causal_gym.cli", "audit", "--per-family", "4", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr  # 4 tasks may miss statistical bands
    live = json.loads(out.read_text())
    assert live["materialization"]["failed"] == 0
    assert live["honest"]["overall"]["n"] == 12
    assert abs(live["honest"]["overall"]["mean_width_ratio"] - 1.0) < 1e-9
    assert live["prior_only_null"]["n"] == 4
    for suffix in ("width_sweep", "coverage", "rewards"):
        assert (tmp_path / f"audit_{suffix}.png").stat().st_size > 1000
    assert "auditing" in proc.stderr or "train:" in proc.stderr
