"""Staging an iv sample as a real extract: an id column, shuffled column and row
order, blank cells in the declared spellings, re-sent (exact duplicate) records,
stray spaces, thousands separators in large amounts and more than one spelling of the
0/1 columns. Every kind of mess is declared in the README's Data notes (notes()), so
an honest analyst can undo it, and the reference kit does (reference/design_iv.py).

The mess is drawn from the `messiness` stream before the sample: which rows are
incomplete does not depend on any value (missing completely at random), so the count
of complete rows, the anchor's n, is known before the data are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causal_gym.designs.spelling import CODE_PAIRS, TOKEN_SETS
from causal_gym.families.iv.model import Population
from causal_gym.families.iv.themes import Measure, Theme
from causal_gym.plan.tiers import TierSpec

#: Where a blank cell falls, by role (the treatment and instrument rarely).
_BLANK_WEIGHTS = {"outcome": 0.4, "covariate": 0.5, "treatment": 0.05, "instrument": 0.05}
_WHITESPACE = {"easy": 0.005, "medium": 0.015, "hard": 0.03}


@dataclass(frozen=True)
class Mess:
    """What staging will do to the clean rows, drawn before they exist."""

    n_clean: int
    duplicates: np.ndarray  # indices of clean rows written twice
    blank_role: np.ndarray  # per clean row: "" (complete) or the role that is blank
    blank_covariate: np.ndarray  # which covariate, where the role is "covariate"
    tokens: tuple[str, ...]
    codes: tuple[tuple[str, str], tuple[str, str]]
    alternative_share: float
    whitespace_share: float
    separator_share: float

    @property
    def n_complete(self) -> int:
        """The clean rows with no blank cell: the rows an analysis can use."""
        return int(np.sum(self.blank_role == ""))


def plan_mess(spec: TierSpec, staged_rows: int, k: int, rng: np.random.Generator) -> Mess:
    """The task's mess: `staged_rows` rows in all, `k` covariates."""
    n_dup = round(staged_rows * rng.uniform(*spec.duplicate_fraction))
    n_clean = staged_rows - n_dup
    incomplete = rng.random(n_clean) < rng.uniform(*spec.missing_row_fraction)
    roles = np.array(list(_BLANK_WEIGHTS))
    weights = np.array(list(_BLANK_WEIGHTS.values()))
    role = rng.choice(roles, size=n_clean, p=weights / weights.sum())
    pair = rng.permutation(len(CODE_PAIRS))[:2]
    return Mess(
        n_clean=n_clean,
        duplicates=rng.choice(n_clean, size=n_dup),
        blank_role=np.where(incomplete, role, ""),
        blank_covariate=rng.integers(0, k, size=n_clean),
        tokens=TOKEN_SETS[int(rng.integers(len(TOKEN_SETS)))],
        codes=(CODE_PAIRS[int(pair[0])], CODE_PAIRS[int(pair[1])]),
        alternative_share=float(rng.uniform(*spec.alternative_coding_fraction)),
        whitespace_share=_WHITESPACE[spec.tier.value],
        separator_share=float(rng.uniform(0.2, 0.7)),
    )


@dataclass(frozen=True)
class Staged:
    """data.csv's bytes and its column order."""

    data_csv: bytes
    columns: tuple[str, ...]


def _numbers(values: np.ndarray, measure: Measure, separators: np.ndarray) -> list[str]:
    plain = f"{{:.{measure.decimals}f}}"
    grouped = f"{{:,.{measure.decimals}f}}"
    return [(grouped if s else plain).format(v) for v, s in zip(values, separators, strict=True)]


def _codes(values: np.ndarray, mess: Mess, alternative: np.ndarray) -> list[str]:
    (one, zero), (alt_one, alt_zero) = mess.codes
    return [
        (alt_one if a else one) if v > 0 else (alt_zero if a else zero)
        for v, a in zip(values, alternative, strict=True)
    ]


def _cell(text: str) -> str:
    return f'"{text}"' if "," in text else text


def stage_rows(
    pop: Population,
    theme: Theme,
    covariates: tuple[Measure, ...],
    mess: Mess,
    rng: np.random.Generator,
) -> Staged:
    """The staged bytes of data.csv (`rng`: the messiness stream, after plan_mess)."""
    n = mess.n_clean
    ids = rng.choice(np.arange(10_000, 100_000), size=n, replace=False)
    columns: dict[str, list[str]] = {theme.id_name: [f"{theme.id_prefix}{i}" for i in ids]}
    z_name, d_name = theme.instrument[0], theme.treatment[0]
    if theme.binary:
        for name, values in ((z_name, pop.z), (d_name, pop.d)):
            columns[name] = _codes(values, mess, rng.random(n) < mess.alternative_share)
    else:  # distance in km, sessions as whole numbers
        columns[z_name] = [f"{v:.1f}" for v in pop.z]
        columns[d_name] = [f"{int(v)}" for v in pop.d]
    roles = {z_name: "instrument", d_name: "treatment"}
    measured = [(m, pop.x[:, j], "covariate") for j, m in enumerate(covariates)]
    measured.append((theme.outcome, pop.y, "outcome"))
    for measure, values, role in measured:
        staged = measure.staged(values)
        grouped = (np.abs(staged) >= 1000) & (rng.random(n) < mess.separator_share)
        columns[measure.name] = _numbers(staged, measure, grouped)
        roles[measure.name] = role
    for j, measure in enumerate(covariates):
        blank = (mess.blank_role == "covariate") & (mess.blank_covariate == j)
        _blank(columns[measure.name], blank, mess, rng)
    for name, role in roles.items():
        if role != "covariate":
            _blank(columns[name], mess.blank_role == role, mess, rng)
    for cells in columns.values():
        for i in np.flatnonzero(rng.random(n) < mess.whitespace_share):
            cells[i] = " " + cells[i] if rng.random() < 0.5 else cells[i] + " "
    order = (theme.id_name, *(str(c) for c in rng.permutation(list(columns)[1:])))
    rows = [",".join(_cell(columns[c][i]) for c in order) for i in range(n)]
    rows += [rows[i] for i in mess.duplicates]
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    text = ",".join(order) + "\n" + "\n".join(shuffled) + "\n"
    return Staged(text.encode("utf-8"), order)


def _blank(cells: list[str], mask: np.ndarray, mess: Mess, rng: np.random.Generator) -> None:
    for i in np.flatnonzero(mask):
        cells[i] = mess.tokens[int(rng.integers(len(mess.tokens)))]
