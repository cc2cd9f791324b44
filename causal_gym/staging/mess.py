"""Make a clean sample messy the way real extracts are, from the `messiness` stream.

Every defect is one the README owns up to and the honest reference can undo without
bias: exact duplicate rows (dropped by dedup), gross outcome outliers (dropped by a
median/MAD rule), MCAR blanks (dropped row-wise), mixed but documented treatment
codes, and shuffled row and column order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causal_gym.plan.tiers import TierSpec
from causal_gym.scm.model import TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample

#: (treated token, control token) pairs a treatment column may be written in.
TREATMENT_CODINGS: tuple[tuple[str, str], ...] = (
    ("1", "0"),
    ("yes", "no"),
    ("true", "false"),
    ("Y", "N"),
    ("treated", "control"),
)
#: Outliers sit this many robust standard deviations from the outcome's median.
OUTLIER_DISTANCE = (10.0, 16.0)
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class TreatmentCoding:
    treated: tuple[str, ...]
    control: tuple[str, ...]


@dataclass(frozen=True)
class MessPlan:
    """Counts fixed before sampling, because duplicates are part of the staged size."""

    n_clean: int
    n_duplicates: int
    n_outliers: int
    n_missing_rows: int
    alternative_share: float
    primary: int
    alternative: int


@dataclass(frozen=True)
class MessyFrame:
    numeric: dict[str, np.ndarray]
    treatment_tokens: np.ndarray
    column_order: tuple[str, ...]
    coding: TreatmentCoding
    plan: MessPlan

    @property
    def n_rows(self) -> int:
        return int(self.treatment_tokens.shape[0])


def plan_mess(spec: TierSpec, staged_rows: int, rng: np.random.Generator) -> MessPlan:
    n_duplicates = max(1, round(staged_rows * rng.uniform(*spec.duplicate_fraction)))
    n_clean = staged_rows - n_duplicates
    primary, alternative = rng.choice(len(TREATMENT_CODINGS), size=2, replace=False)
    return MessPlan(
        n_clean=n_clean,
        n_duplicates=n_duplicates,
        n_outliers=max(1, round(n_clean * rng.uniform(*spec.outlier_fraction))),
        n_missing_rows=round(n_clean * rng.uniform(*spec.missing_row_fraction)),
        alternative_share=float(rng.uniform(*spec.alternative_coding_fraction)),
        primary=int(primary),
        alternative=int(alternative),
    )


def make_messy(
    scm: Scm, sample: CleanSample, plan: MessPlan, outcome: str, rng: np.random.Generator
) -> MessyFrame:
    n = sample.n_rows
    if n != plan.n_clean:
        raise ValueError(f"sample has {n} rows, mess plan expects {plan.n_clean}")
    observed = [node.id for node in scm.nodes if node.observed]
    numeric = {
        node_id: sample.columns[node_id].astype(np.float64)
        for node_id in observed
        if node_id != TREATMENT_ID
    }

    y = numeric[outcome]
    median = float(np.median(y))
    robust_sd = MAD_TO_SD * float(np.median(np.abs(y - median)))
    outlier_rows = rng.choice(n, size=plan.n_outliers, replace=False)
    signs = rng.choice((-1.0, 1.0), size=plan.n_outliers)
    y[outlier_rows] = median + signs * robust_sd * rng.uniform(*OUTLIER_DISTANCE, plan.n_outliers)

    treated_token, control_token = TREATMENT_CODINGS[plan.primary]
    alt_treated, alt_control = TREATMENT_CODINGS[plan.alternative]
    use_alt = rng.random(n) < plan.alternative_share
    t = sample.columns[TREATMENT_ID] == 1
    tokens = np.where(t, treated_token, control_token).astype(object)
    tokens[use_alt & t] = alt_treated
    tokens[use_alt & ~t] = alt_control
    used_alt = bool(use_alt.any())
    coding = TreatmentCoding(
        treated=(treated_token, alt_treated) if used_alt else (treated_token,),
        control=(control_token, alt_control) if used_alt else (control_token,),
    )

    missing_rows = rng.choice(n, size=plan.n_missing_rows, replace=False)
    for row in missing_rows:
        for col in rng.choice(len(observed), size=int(rng.integers(1, 3)), replace=False):
            node_id = observed[int(col)]
            if node_id == TREATMENT_ID:
                tokens[row] = ""
            else:
                numeric[node_id][row] = np.nan

    sources = rng.choice(n, size=plan.n_duplicates, replace=False)
    order = rng.permutation(n + plan.n_duplicates)
    rows = np.concatenate([np.arange(n), sources])[order]
    numeric = {node_id: values[rows] for node_id, values in numeric.items()}
    tokens = tokens[rows]

    column_order = tuple(observed[i] for i in rng.permutation(len(observed)))
    return MessyFrame(numeric, tokens, column_order, coding, plan)


def merged_coding(first: TreatmentCoding, second: TreatmentCoding) -> TreatmentCoding:
    """The codes of two staged files together (each spelling once, first file's first):
    what a README lists when a family stages a second file."""
    return TreatmentCoding(
        tuple(dict.fromkeys(first.treated + second.treated)),
        tuple(dict.fromkeys(first.control + second.control)),
    )
