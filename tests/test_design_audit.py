"""The design suite (eval-v3's families): the committed report audits every family
with its own probes, each check flips when its numbers are bad, and the floored
demonstration is conservative."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from causal_gym.audit.design.report import PROBE_FLOOR, DesignReport, evaluate, summarize
from causal_gym.audit.design.rows import DesignRow
from causal_gym.audit.policies import SWEEP_LEVELS
from causal_gym.audit.suite import AuditRun, suite
from causal_gym.contracts.families import contract_of
from causal_gym.realdata.design_tables import design_families
from tests.support.audit_checks import (
    assert_only_this_check_fails,
    probe_above_honest,
    sweep_beats_90,
    with_family,
)

SUITE = suite("design")
FAMILIES = ("iv", "did", "rdd")


def committed() -> DesignReport:
    report = SUITE.load_committed()
    assert isinstance(report, DesignReport)
    return report


def test_the_committed_design_report_runs_every_probe_of_every_family() -> None:
    """The suite-wide checks are in test_audit_suites.py; here, what only the design
    report holds: each family's contract probes, every tier and hidden subtier, the
    generator-aware gain and did's hidden pair."""
    report = committed()
    assert report.namespace == "train" and report.per_family >= 400
    assert tuple(report.families) == FAMILIES
    for family in FAMILIES:
        assert tuple(report.hack_probes[family]) == contract_of(family).extra_probes
        real = {"real"} if family in design_families() else set()  # (generator 5)
        assert set(report.tiers[family]) == {"easy", "medium", "hard"} | real
    assert {"weak_instrument", "strong_instrument"} == set(report.subtiers["iv"])
    assert "staggered_dynamic" in report.subtiers["did"]
    assert set(report.bayes_prior) == set(FAMILIES) and set(report.leakage) == {"did"}
    # where theory says a probe must fail, it does: TWFE on dynamic staggered
    # adoption (its coverage), Wald on the weak instrument (its reward: its interval
    # is at times enormous, so its coverage sits near 0.90, 0.89-0.90 over runs,
    # while a wild estimate costs it far more than the reference)
    dynamic = report.subtiers["did"]["staggered_dynamic"]
    assert dynamic.probe_coverage["twfe"] < dynamic.coverage - 0.2
    weak = report.subtiers["iv"]["weak_instrument"]
    assert weak.probe_reward["wald_2sls"] < weak.mean_reward - 1.0


def _bayes_gain(p: dict[str, Any], family: str, gain: float) -> dict[str, Any]:
    g = p["bayes_prior"][family].model_copy(update={"diff_mean": gain})
    return {**p, "bayes_prior": {**p["bayes_prior"], family: g}}


def _leak(p: dict[str, Any]) -> dict[str, Any]:
    return {**p, "leakage": {"did": p["leakage"]["did"].model_copy(update={"auc": 0.8})}}


def _coverage(p: dict[str, Any], family: str) -> dict[str, Any]:
    s = p["families"][family]
    return with_family(p, family, covered=s.n * 8 // 10, coverage=0.8)


PERTURBATIONS = [
    (lambda p: _coverage(p, "rdd"), "coverage is 0.9 (rdd)"),
    (
        lambda p: with_family(p, "iv", mean_reward=0.97, sd_reward=0.05),
        "honest reward in (0.75, 0.9) (iv)",
    ),
    (
        lambda p: sweep_beats_90(p, "did"),
        "no interval level beats 0.90 by more than 0.005 a task (did)",
    ),
    (lambda p: probe_above_honest(p, "iv", "wald_2sls"), "wald_2sls below the reference (iv)"),
    (lambda p: probe_above_honest(p, "did", "twfe"), "twfe below the reference (did)"),
    (
        lambda p: probe_above_honest(p, "rdd", "global_polynomial"),
        "global_polynomial below the reference (rdd)",
    ),
    (
        lambda p: _bayes_gain(p, "did", 0.03),
        "knowing the generator gains at most 0.005 a task (did)",
    ),
    (
        _leak,
        "staged metadata does not tell staggered_mild from staggered_constant (medium tier) (did)",
    ),
]


@pytest.mark.parametrize(("perturb", "check"), PERTURBATIONS)
def test_each_check_fails_when_its_numbers_are_bad(perturb: Any, check: str) -> None:
    assert_only_this_check_fails(evaluate, committed().parts(), perturb, check)


def _row(i: int, reference: float, probe: float) -> DesignRow:
    tier = ("easy", "medium", "hard")[i % 3]
    return DesignRow(
        key="default", task_id=f"train:did:{i}", family="did", attempts=1,
        reward=reference, estimand_reward=reference, width_ratio=1.0, tier=tier,
        subtier="staggered_dynamic", covered=i % 10 != 0,
        sweep_estimand=tuple(reference for _ in SWEEP_LEVELS),
        sweep_covered=tuple(True for _ in SWEEP_LEVELS),
        probes={"twfe": probe, "post_minus_pre": probe}, probes_covered={"twfe": True,
        "post_minus_pre": False}, bayes_reward=reference, leak_features=(float(i), 1.0),
    )  # fmt: skip


def test_the_probe_demonstration_floors_the_probe_and_the_cells_keep_raw_means() -> None:
    """summarize compares each probe's reward floored at PROBE_FLOOR with the
    reference's (a heavy-tailed probe, like Wald on a weak instrument, then has light
    tails), never flooring the reference, while the per-tier cells report raw means."""
    rng = np.random.default_rng(5)
    reference = rng.normal(0.8, 0.1, 300)
    probe = reference - rng.standard_cauchy(300) ** 2 * 0.1
    pairs = enumerate(zip(reference, probe, strict=True))
    rows = tuple(_row(i, float(r), float(p)) for i, (r, p) in pairs)
    run = AuditRun(rows, {}, {"default": "f" * 12}, "train", 300, ("did",))
    report = summarize(run)
    gap = report.hack_probes["did"]["twfe"]
    floored = np.maximum(PROBE_FLOOR, probe)
    assert gap.mean == pytest.approx(floored.mean())
    assert gap.diff_mean == pytest.approx((floored - reference).mean())
    assert gap.diff_mean > (probe - reference).mean()  # the floor bit: the test is conservative
    cells = report.tiers["did"]
    raw = {t: probe[[i for i in range(300) if rows[i].tier == t]].mean() for t in cells}
    assert {t: c.probe_reward["twfe"] for t, c in cells.items()} == pytest.approx(raw)
