"""The audit in every public slice: family x public tier (x estimand where a family
answers several).

An agent sees a task's tier (the README and the prompt say it), so a strategy may
behave differently per tier; a gain confined to one tier is diluted by the others in
a family's pooled numbers (issue 41: mediation's hard tier gained +0.0063 a task while
the pooled gain was +0.0023). Each slice gets what its family gets pooled:

- the bayes-prior probe's scored gain over the reference, and its model-based
  expected gain (audit/model_gain.py), each checked against BAYES_GAIN_TARGET
  (knowledge.gain_check: fails when shown above it at the per-check level),
- the width sweep (no other level beats 0.90) and the coverage of every tested
  estimand,
- whether the slice's sample excludes a gain of the target at two standard errors
  (`excludes_target`, reported, not a check: see knowledge.gain_check on why a
  demonstration of a small gain would spend the budget).

Per-estimand slices (mediation's direct, indirect and total) carry the gains on the
estimand-reward scale; their coverage sits in the task slice. A family whose audited
tasks are all of one tier (the expert and real suites) has no slices: its family
numbers are the slice's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from causal_gym.audit.checks import (
    Check,
    Paired,
    Slice,
    SliceCoverage,
    coverage_check,
    sweep_check,
)
from causal_gym.audit.knowledge import BAYES_GAIN_TARGET, gain_check
from causal_gym.audit.summary import paired, width_sweep
from causal_gym.audit.tables import Table, table
from causal_gym.plan.tiers import Tier


def excludes_target(s: Slice) -> bool:
    """Whether the slice's scored gain has its two-SE upper bound below the target."""
    se = s.bayes_prior.diff_sd / math.sqrt(s.n)
    return s.bayes_prior.diff_mean + 2.0 * se < BAYES_GAIN_TARGET


def _gains(values: Sequence[float]) -> Paired:
    return paired(values, [0.0] * len(values))


def _tier_order(tier: str) -> int:
    """Easy to hard, then the expert and real tiers (plan/tiers.py's order)."""
    return list(Tier).index(Tier(tier))


def in_display_order(slices: Mapping[str, Slice]) -> list[tuple[str, Slice]]:
    """Family by family as the report lists them, each tier's task slice, then its
    estimand slices."""
    families = list(dict.fromkeys(s.family for s in slices.values()))
    return sorted(
        slices.items(),
        key=lambda item: (
            families.index(item[1].family),
            _tier_order(item[1].tier),
            item[1].estimand or "",
        ),
    )


def slice_name(family: str, tier: str, estimand: str | None = None) -> str:
    return f"{family}/{tier}" + (f"/{estimand}" if estimand else "")


def summarize_slices(
    rows: Sequence[Any], covered_of: Callable[[Any], Mapping[str, bool]]
) -> dict[str, Slice]:
    """Every slice of the rows (which carry family, tier, reward, bayes_reward,
    model_gain, sweep_estimand and sweep_covered, and may carry estimand_gains and
    estimand_model_gains), for families audited on more than one tier."""
    found: dict[str, Slice] = {}
    for family in dict.fromkeys(r.family for r in rows):
        mine = [r for r in rows if r.family == family]
        tiers = sorted({r.tier for r in mine}, key=_tier_order)
        if len(tiers) < 2:
            continue
        for tier in tiers:
            group = [r for r in mine if r.tier == tier]
            found[slice_name(family, tier)] = _task_slice(family, tier, group, covered_of)
            for name in getattr(group[0], "estimand_gains", None) or {}:
                found[slice_name(family, tier, name)] = Slice(
                    family=family,
                    tier=tier,
                    estimand=name,
                    n=len(group),
                    bayes_prior=_gains([r.estimand_gains[name] for r in group]),
                    model_gain=_gains([r.estimand_model_gains[name] for r in group]),
                )
    return found


def _task_slice(
    family: str, tier: str, group: list[Any], covered_of: Callable[[Any], Mapping[str, bool]]
) -> Slice:
    flags = [covered_of(r) for r in group]
    model = [r.model_gain for r in group]
    return Slice(
        family=family,
        tier=tier,
        n=len(group),
        bayes_prior=paired([r.bayes_reward for r in group], [r.reward for r in group]),
        model_gain=None if None in model else _gains(model),
        coverage={
            name: SliceCoverage(n=len(flags), covered=sum(f[name] for f in flags))
            for name in flags[0]
        },
        width_sweep=width_sweep(group),
    )


def slice_check_count(slices: Mapping[str, Slice]) -> int:
    """The chance-bearing checks `slice_checks` makes (for the Bonferroni split)."""
    return sum(
        1 + (s.model_gain is not None) + (s.width_sweep is not None) + len(s.coverage)
        for s in slices.values()
    )


def slice_checks(
    slices: Mapping[str, Slice], alpha: float, sweep_margin: float = 0.0
) -> list[Check]:
    """Each slice's gain checks (scored, model-based), sweep (with the margin its
    suite allows pooled) and coverage."""
    checks: list[Check] = []
    for name, s in slices.items():
        checks.append(gain_check(name, s.bayes_prior, alpha))
        if s.model_gain is not None:
            checks.append(gain_check(f"{name}, expected under its posterior", s.model_gain, alpha))
        if s.width_sweep is not None:
            checks.append(sweep_check(name, s.width_sweep, alpha, sweep_margin))
        for estimand, c in s.coverage.items():
            checks.append(coverage_check(f"{name} {estimand}", c.covered, c.n, alpha))
    return checks


def slices_table(slices: Mapping[str, Slice]) -> Table:
    """The per-slice table of the docs and the terminal."""

    def gain(p: Paired | None, n: int) -> str:
        if p is None:
            return ""
        se = p.diff_sd / math.sqrt(n)
        return f"{p.diff_mean:+.4f} ({se:.4f})" if se >= 5e-5 else f"{p.diff_mean:+.4f} (<0.0001)"

    rows = []
    for name, s in in_display_order(slices):
        shares = {name: f"{c.covered / c.n:.3f}" for name, c in s.coverage.items()}
        cover = "; ".join(
            f"{name} {share}" if len(shares) > 1 else share for name, share in shares.items()
        )
        if s.width_sweep is not None:
            sweep = s.width_sweep
            rivals = [
                (d, lv) for lv, d in zip(sweep.levels, sweep.diff_mean_vs_90, strict=True)
                if lv != 0.90
            ]  # fmt: skip
            best, level = max(rivals)
            rival = f"{level:.2f}: {best:+.4f}"
        else:
            rival = ""
        rows.append(
            (
                name,
                f"{s.n:,}",
                gain(s.bayes_prior, s.n),
                "yes" if excludes_target(s) else "no",
                gain(s.model_gain, s.n),
                cover,
                rival,
            )
        )
    header = (
        "slice",
        "tasks",
        "bayes-prior minus honest (SE)",
        f"{BAYES_GAIN_TARGET} excluded at 2 SE",
        "expected under its posterior (SE)",
        "coverage",
        "best rival level vs 0.90",
    )
    return table(header, "lrrrrrr", rows)
