"""Solvability: the honest reference must work on the exact staged bytes.

This is checked on what the agent will see (after duplicates, outliers, blanks and
recoding), not on the clean sample. It never looks at the truth: rejecting tasks
whose reference interval misses would silently fake the audit's coverage.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from causal_gym.reference.analyst import (
    ReferenceFit,
    Z,
    clean_rows,
    fit_reference,
    outcome_scale,
    parse_readme,
    read_staged,
)
from causal_gym.reference.estimands import Analysis, EstimandFit

MIN_ARM_ROWS = 30
#: Reference interval width above this share of the outcome's scale is hopeless.
MAX_WIDTH_TO_SCALE = 0.6


@dataclass(frozen=True)
class Solvability:
    fit: ReferenceFit
    scale: float
    reasons: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def reference_width(self) -> float:
        """The width an honest 90% interval has on this frame: r = 2 z_0.95 SE."""
        return 2.0 * Z * self.fit.se


def check_solvability(csv_bytes: bytes, readme_text: str) -> Solvability:
    """The linear tiers' check: adjusted OLS, the honest reference there."""
    dictionary = parse_readme(readme_text)
    staged = read_staged(csv_bytes, dictionary)
    fit = fit_reference(staged, dictionary)
    scale = outcome_scale(staged, dictionary.outcome)
    reasons: list[str] = []
    if not fit.full_rank:
        reasons.append("reference design matrix is rank deficient")
    if min(fit.n_treated, fit.n_control) < MIN_ARM_ROWS:
        reasons.append(
            f"an arm has fewer than {MIN_ARM_ROWS} clean rows "
            f"({fit.n_treated} treated, {fit.n_control} control)"
        )
    if not (math.isfinite(fit.se) and fit.se > 0 and math.isfinite(fit.estimate)):
        reasons.append("reference standard error is not finite and positive")
    elif 2.0 * Z * fit.se / scale > MAX_WIDTH_TO_SCALE:
        reasons.append(f"reference width / scale exceeds {MAX_WIDTH_TO_SCALE}")
    return Solvability(fit, scale, tuple(reasons))


@dataclass(frozen=True)
class ExpertSolvability:
    """An expert task's check, against its efficiency bound: no reference fit needed."""

    n_used: int
    width: float  # r, the bound's 90% width at the rows an honest analysis keeps
    scale: float
    reasons: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.reasons


def check_expert_solvability(
    csv_bytes: bytes, readme_text: str, width_at: Callable[[int], float]
) -> ExpertSolvability:
    """The expert tier's check on the exact staged bytes, without fitting anything.

    What the check guards is the same as on the linear tiers: enough rows in each arm
    after the honest cleaning, and an honest 90% interval narrow enough to be worth
    scoring. On an expert task the best width any honest analysis can reach is a
    property of the task, the efficiency bound's (`width_at(n)`, n the rows the
    cleaning keeps), and the bound is the reward's anchor anyway; so the check asks it,
    instead of fitting the cross-fitted boosting reference (0.65 s a task, four fifths
    of an expert task's cost). The flexible reference is still what an honest analyst
    runs (flexible.py); the audit runs it."""
    dictionary = parse_readme(readme_text)
    staged = read_staged(csv_bytes, dictionary)
    cleaned = clean_rows(staged, dictionary, dictionary.pre_treatment)
    n_used = len(cleaned.frame)
    n_treated = int(cleaned.frame["__t"].sum())
    scale = outcome_scale(staged, dictionary.outcome)
    reasons: list[str] = []
    if min(n_treated, n_used - n_treated) < MIN_ARM_ROWS:
        reasons.append(
            f"an arm has fewer than {MIN_ARM_ROWS} clean rows "
            f"({n_treated} treated, {n_used - n_treated} control)"
        )
        return ExpertSolvability(n_used, math.nan, scale, tuple(reasons))
    width = width_at(n_used)
    if not (math.isfinite(width) and width > 0):
        reasons.append("the efficiency bound's width is not finite and positive")
    elif width / scale > MAX_WIDTH_TO_SCALE:
        reasons.append(f"the bound's width / scale exceeds {MAX_WIDTH_TO_SCALE}")
    return ExpertSolvability(n_used, width, scale, tuple(reasons))


@dataclass(frozen=True)
class MultiSolvability:
    """Solvability of a multi-estimand task: every estimand's reference fit."""

    fits: dict[str, EstimandFit]
    scale: float
    reasons: tuple[str, ...]
    #: The clean rows of each staged file the reference used (the anchor's n).
    rows: dict[str, int]

    @property
    def ok(self) -> bool:
        return not self.reasons


def check_multi_solvability(files: dict[str, bytes]) -> MultiSolvability:
    """The estimands.py reference on the exact staged files: every estimand full rank,
    with enough rows in each arm and a finite, useful interval. A trial (obs_vs_rct)
    must be solvable on its own too, since its estimate is the fallback."""
    analysis = Analysis.parse(files)
    fits = dict(analysis.fits)
    if analysis.obs_rct is not None:
        fits["trial"] = analysis.obs_rct.trial
        fits["observational"] = analysis.obs_rct.observational
    reasons: list[str] = []
    for name, fit in fits.items():
        if not fit.full_rank:
            reasons.append(f"{name}: reference design matrix is rank deficient")
        elif fit.min_arm_rows < MIN_ARM_ROWS:
            reasons.append(f"{name}: an arm has fewer than {MIN_ARM_ROWS} clean rows")
        elif not (math.isfinite(fit.se) and fit.se > 0 and math.isfinite(fit.estimate)):
            reasons.append(f"{name}: reference standard error is not finite and positive")
        elif 2.0 * Z * fit.se / analysis.scale > MAX_WIDTH_TO_SCALE:
            reasons.append(f"{name}: reference width / scale exceeds {MAX_WIDTH_TO_SCALE}")
    if analysis.obs_rct is not None:
        rows = {
            "data.csv": analysis.obs_rct.observational.n_used,
            "trial.csv": analysis.obs_rct.trial.n_used,
        }
    else:
        rows = {"data.csv": max(fit.n_used for fit in analysis.fits.values())}
    return MultiSolvability(dict(analysis.fits), analysis.scale, tuple(reasons), rows)
