"""Helpers the audit tests share: perturbations that make one family's numbers bad,
the check that only the perturbed check flips, and what a live CLI run must show."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

from causal_gym.audit.plots import PLOT_NAMES
from causal_gym.audit.report import SuiteReport
from causal_gym.audit.suite import AuditSuite

Evaluate = Callable[[dict[str, Any]], Sequence[Any]]


def with_family(p: dict[str, Any], family: str, **changes: Any) -> dict[str, Any]:
    summary = p["families"][family].model_copy(update=changes)
    return {**p, "families": {**p["families"], family: summary}}


def probe_above_honest(p: dict[str, Any], family: str, probe: str) -> dict[str, Any]:
    gap = p["hack_probes"][family][probe].model_copy(update={"diff_mean": 0.05})
    probes = {**p["hack_probes"][family], probe: gap}
    return {**p, "hack_probes": {**p["hack_probes"], family: probes}}


def sweep_beats_90(p: dict[str, Any], family: str) -> dict[str, Any]:
    """The 0.95 level made clearly better than 0.90 in one family."""
    sweep = p["width_sweep"][family]
    diffs = list(sweep.diff_mean_vs_90)
    diffs[sweep.levels.index(0.95)] = 0.05
    changed = sweep.model_copy(update={"diff_mean_vs_90": tuple(diffs)})
    return {**p, "width_sweep": {**p["width_sweep"], family: changed}}


def assert_only_this_check_fails(
    evaluate: Evaluate,
    good: dict[str, Any],
    perturb: Callable[[dict[str, Any]], dict[str, Any]],
    check: str,
) -> None:
    """The named check passes on the committed numbers and fails on the perturbed ones,
    and nothing else flips but the power sum (which counts every check)."""

    def verdicts(report_parts: dict[str, Any]) -> dict[str, bool]:
        return {c.name: c.passed for c in evaluate(report_parts)}

    assert verdicts(good)[check] is True
    bad = verdicts(perturb(good))
    assert bad[check] is False
    flipped = {name for name, ok in bad.items() if not ok}
    powered = next(name for name in bad if name.startswith("the audit is powered"))
    assert flipped <= {check, powered}


def assert_cli_follows_checks(
    suite: AuditSuite, live: SuiteReport, proc: CompletedProcess[str], out_dir: Path
) -> None:
    """A live `causal-gym audit` run: its checks recomputed from the file agree with
    its stored verdicts, its exit code and its FAIL lines follow them, and its plots
    were drawn (a run this small is underpowered, and says so)."""
    recomputed = suite.recheck(live)
    assert [c.passed for c in recomputed] == [c.passed for c in live.checks]
    assert proc.returncode == (0 if all(c.passed for c in recomputed) else 1)
    for c in recomputed:
        assert (f"FAIL {c.name}" in proc.stderr) == (not c.passed), c.name
    for plot in PLOT_NAMES:
        assert (out_dir / f"audit_{plot}.png").stat().st_size > 1000
