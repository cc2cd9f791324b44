"""The design audit's report: per family the reference's coverage and reward (and per
tier and hidden subtier, descriptive), the width sweep, each probe minus the
reference, the generator-aware probe's gain, and the leakage of a hidden subtier; the
checks evaluated over them.

Same statistics and the same 1% false-alarm budget as every suite (checks.py,
report.py): the consistency checks (coverage, reward band, sweep, the gain, the
leakage) split CONSISTENCY_BUDGET by Bonferroni; a probe below the reference is a
demonstration at DEMONSTRATION_LEVEL; the file keeps every check's sufficient
statistics.

A naive analysis of a design is sometimes wildly off (2SLS has no mean with one weak
instrument; a too-wide bandwidth on a curved mean), so its reward is heavy-tailed and
a paired test of the raw difference has little power however large its mean. The
demonstration therefore compares each probe's reward floored at PROBE_FLOOR with the
reference's own: the floor only raises the probe, so a difference shown below zero
with it is below zero without it (a conservative test of the same claim), and its
tails are light. The per-tier and per-subtier cells report the raw means.

The width sweep is held to the issue's tolerance for any staged-only strategy, a gain
of at most BAYES_GAIN_TARGET a task (rescaling the reference's interval is one): the
clustered intervals of did's reference cover 0.90 on average, yet over 1,200 tasks a
0.92 interval scored 0.0016 a task more on one run (z 4.3; misses fall a little more
often where the interval is wide next to the outcome's spread, the few-cluster
panels), significant but immaterial. The other suites test a zero margin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from causal_gym.audit.checks import (
    Check,
    CoveredSummary,
    Leakage,
    Model,
    Paired,
    RewardSummary,
    WidthSweep,
    band_check,
    below_check,
    coverage_check,
    materialized_checks,
    powered_check,
    sweep_check,
)
from causal_gym.audit.design.rows import HIDDEN_PAIRS, DesignRow
from causal_gym.audit.knowledge import BAYES_GAIN_TARGET, gain_check, leakage, leakage_check
from causal_gym.audit.report import SuiteReport, seal
from causal_gym.audit.slices import slice_check_count, slice_checks, summarize_slices
from causal_gym.audit.suite import AuditRun
from causal_gym.audit.summary import family_frame, paired, reward_fields
from causal_gym.contracts.families import contract_of


class FamilySummary(RewardSummary, CoveredSummary):
    pass


class CellSummary(Model):
    """A tier's or a hidden subtier's tasks (descriptive: no check reads these)."""

    n: int
    coverage: float
    mean_reward: float
    #: Each probe's mean reward and coverage on the cell's tasks.
    probe_reward: dict[str, float]
    probe_coverage: dict[str, float]


class DesignReport(SuiteReport):
    families: dict[str, FamilySummary]
    width_sweep: dict[str, WidthSweep]
    #: family -> probe -> the probe's reward floored at PROBE_FLOOR, minus the reference's
    hack_probes: dict[str, dict[str, Paired]]
    tiers: dict[str, dict[str, CellSummary]]  # family -> tier -> cell
    subtiers: dict[str, dict[str, CellSummary]]  # family -> hidden subtier -> cell
    leakage: dict[str, Leakage]  # families with a hidden pair of subtiers in one tier


#: The floor a probe's reward is held to in the demonstration that it scores below the
#: reference (the module's docstring says why it is conservative).
PROBE_FLOOR = -1.0


def _probe_names(family: str) -> tuple[str, ...]:
    return contract_of(family).extra_probes


def family_summary(rows: list[DesignRow]) -> FamilySummary:
    covered = sum(r.covered for r in rows)
    return FamilySummary(**reward_fields(rows), covered=covered, coverage=covered / len(rows))


def cell(rows: list[DesignRow]) -> CellSummary:
    names = rows[0].probes
    return CellSummary(
        n=len(rows),
        coverage=float(np.mean([r.covered for r in rows])),
        mean_reward=float(np.mean([r.reward for r in rows])),
        probe_reward={n: float(np.mean([r.probes[n] for r in rows])) for n in names},
        probe_coverage={n: float(np.mean([r.probes_covered[n] for r in rows])) for n in names},
    )


def _cells(rows: list[DesignRow], field: str) -> dict[str, CellSummary]:
    values = sorted({getattr(r, field) for r in rows})
    return {v: cell([r for r in rows if getattr(r, field) == v]) for v in values}


def _hidden_leakage(family: str, rows: list[DesignRow]) -> Leakage | None:
    pair = HIDDEN_PAIRS.get(family)
    if pair is None:
        return None
    tier, first, second = pair
    scored = [r for r in rows if r.tier == tier and r.subtier in (first, second)]
    labels = [r.subtier == second for r in scored]
    if len(set(labels)) < 2:
        return None
    what = f"{second} from {first} ({tier} tier)"
    return leakage(what, [r.leak_features for r in scored], labels)


def summarize(run: AuditRun) -> DesignReport:
    numbers, groups = family_frame(run, family_summary, _probe_names)
    numbers["hack_probes"] = {
        f: {
            name: paired([max(PROBE_FLOOR, r.probes[name]) for r in g], [r.reward for r in g])
            for name in _probe_names(f)
        }
        for f, g in groups.items()
    }
    numbers["tiers"] = {f: _cells(g, "tier") for f, g in groups.items()}
    numbers["subtiers"] = {f: _cells(g, "subtier") for f, g in groups.items()}
    found = {f: _hidden_leakage(f, g) for f, g in groups.items()}
    numbers["leakage"] = {f: leak for f, leak in found.items() if leak is not None}
    # coverage, reward band, sweep and the generator-aware gain per family; the leakage
    numbers["slices"] = summarize_slices(run.rows, lambda r: {"interval": r.covered})
    consistency = 4 * len(groups) + len(numbers["leakage"])
    consistency += slice_check_count(numbers["slices"])
    return seal(numbers, DesignReport, evaluate, consistency)


def evaluate(report: dict[str, Any]) -> list[Check]:
    """Named checks over a report under construction (a plain dict of the models),
    from its stored statistics alone, so a committed file can be re-checked."""
    alpha = report["per_check_alpha"]
    checks = materialized_checks(report["keys"])
    for family, s in report["families"].items():
        checks.append(coverage_check(family, s.covered, s.n, alpha))
        checks.append(band_check(family, s.mean_reward, s.sd_reward, s.n, alpha))
        sweep = report["width_sweep"][family]
        checks.append(sweep_check(family, sweep, alpha, BAYES_GAIN_TARGET))
        for name, gap in report["hack_probes"][family].items():
            checks.append(below_check(f"{name} below the reference ({family})", gap))
    checks += [gain_check(f, gain, alpha) for f, gain in report.get("bayes_prior", {}).items()]
    checks += [leakage_check(f, found, alpha) for f, found in report.get("leakage", {}).items()]
    checks += slice_checks(report.get("slices", {}), alpha, BAYES_GAIN_TARGET)
    checks.append(powered_check(checks))
    return checks
