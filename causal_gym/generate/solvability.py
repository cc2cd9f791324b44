"""Solvability: the honest reference must work on the exact staged bytes.

This is checked on what the agent will see (after duplicates, outliers, blanks and
recoding), not on the clean sample. It never looks at the truth: rejecting tasks
whose reference interval misses would silently fake the audit's coverage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from causal_gym.reference.analyst import (
    ReferenceFit,
    Z,
    honest_fit,
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
        """r = 2 z_0.95 SE: the width an honest 90% interval has on this frame."""
        return 2.0 * Z * self.fit.se


def check_solvability(csv_bytes: bytes, readme_text: str) -> Solvability:
    dictionary = parse_readme(readme_text)
    staged = read_staged(csv_bytes, dictionary)
    fit = honest_fit(staged, dictionary)
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
class MultiSolvability:
    """Solvability of a multi-estimand task: every estimand's reference fit."""

    fits: dict[str, EstimandFit]
    scale: float
    reasons: tuple[str, ...]

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
    return MultiSolvability(dict(analysis.fits), analysis.scale, tuple(reasons))
