"""Helpers the audit tests share: a committed report's parts without its verdicts,
and perturbations that make one family's numbers bad."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

Evaluate = Callable[[dict[str, Any]], Sequence[Any]]


def parts(report: BaseModel) -> dict[str, Any]:
    """The report's fields except the verdicts, as the check evaluators take them."""
    skip = {"checks", "total_false_alarm"}
    return {name: getattr(report, name) for name in type(report).model_fields if name not in skip}


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
