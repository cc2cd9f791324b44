"""Staging an rdd sample as a real extract: an id column, shuffled column and row
order, blank cells in the declared spellings, re-sent (exact duplicate) records, stray
spaces, and the treatment written in more than one declared spelling of 1 and 0. The
running variable is written as its theme's number (a score, an age, an income) or as a
date in a declared strftime format. Every kind of mess is declared in the README's
Data notes (dictionary.py), so an honest analyst can undo it, and the reference kit
does (reference/design_rdd.py).

The mess is drawn from the `messiness` stream before the sample: which rows are
incomplete does not depend on any value (missing completely at random), so the count
of rows an analysis can use, the anchor's n, is known before the data are drawn.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from causal_gym.designs.spelling import CODE_PAIRS, TOKEN_SETS
from causal_gym.families.rdd.themes import Running, Theme
from causal_gym.plan.tiers import TierSpec

#: Where a blank cell falls, by role.
_BLANK_WEIGHTS = {"running": 0.3, "outcome": 0.5, "treatment": 0.2}
_WHITESPACE = {"easy": 0.005, "medium": 0.015, "hard": 0.03, "real": 0.015}


@dataclass(frozen=True)
class Mess:
    """What staging will do to the clean rows, drawn before they exist."""

    n_clean: int
    duplicates: np.ndarray  # indices of clean rows written twice
    blank_role: np.ndarray  # per clean row: "" (complete) or the role that is blank
    tokens: tuple[str, ...]
    codes: tuple[tuple[str, str], tuple[str, str]]
    alternative_share: float
    whitespace_share: float

    def usable(self, sharp: bool) -> np.ndarray:
        """The clean rows an analysis can use: the running variable and the outcome
        present, and, in a fuzzy design, the treatment too."""
        needed = ("running", "outcome") if sharp else ("running", "outcome", "treatment")
        return ~np.isin(self.blank_role, needed)


def plan_mess(spec: TierSpec, staged_rows: int, rng: np.random.Generator) -> Mess:
    """The task's mess: `staged_rows` rows in all."""
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
        tokens=TOKEN_SETS[int(rng.integers(len(TOKEN_SETS)))],
        codes=(CODE_PAIRS[int(pair[0])], CODE_PAIRS[int(pair[1])]),
        alternative_share=float(rng.uniform(*spec.alternative_coding_fraction)),
        whitespace_share=_WHITESPACE[spec.tier.value],
    )


def quantize(u: np.ndarray, running: Running) -> tuple[np.ndarray, np.ndarray]:
    """(k, u at k): the running variable's steps from the cutoff, floored so that the
    sign (eligibility) is kept, and the model's u at that written value."""
    k = np.floor(u * running.per_unit / running.step).astype(np.int64)
    return k, k * running.step / running.per_unit


def written_cutoff(running: Running, cutoff: str, date_format: str) -> str:
    """The cutoff as the README writes it (a date in the task's format)."""
    if running.is_date:
        return dt.date.fromisoformat(cutoff).strftime(date_format)
    return cutoff


def running_cells(k: np.ndarray, running: Running, cutoff: str, date_format: str) -> list[str]:
    """The running variable's cells: k steps from the cutoff on the eligible side's
    direction."""
    sign = 1 if running.eligible_above else -1
    if running.is_date:
        start = dt.date.fromisoformat(cutoff)
        return [(start + dt.timedelta(days=sign * int(v))).strftime(date_format) for v in k]
    base = round(float(cutoff) / running.step)
    fmt = f"{{:.{running.decimals}f}}"
    return [fmt.format((base + sign * int(v)) * running.step) for v in k]


@dataclass(frozen=True)
class Staged:
    """data.csv's bytes and its column order."""

    data_csv: bytes
    columns: tuple[str, ...]


def _codes(values: np.ndarray, mess: Mess, alternative: np.ndarray) -> list[str]:
    (one, zero), (alt_one, alt_zero) = mess.codes
    return [
        (alt_one if a else one) if v > 0 else (alt_zero if a else zero)
        for v, a in zip(values, alternative, strict=True)
    ]


def stage_rows(
    k: np.ndarray,
    d: np.ndarray,
    y: np.ndarray,
    theme: Theme,
    cutoff: str,
    date_format: str,
    mess: Mess,
    rng: np.random.Generator,
    real: dict[str, list[str]] | None = None,
) -> Staged:
    """The staged bytes of data.csv (`y` in model units; `rng`: the messiness stream,
    after plan_mess). `real`: a real table's cells by column, the running variable's
    among them, which then replace the ones written from `k` (the real tier)."""
    n = mess.n_clean
    ids = rng.choice(np.arange(10_000, 100_000), size=n, replace=False)
    out = theme.outcome
    r_name, d_name = theme.running.name, theme.treatment[0]
    columns: dict[str, list[str]] = {
        theme.id_name: [f"{theme.id_prefix}{i}" for i in ids],
        r_name: [] if real else running_cells(k, theme.running, cutoff, date_format),
        d_name: _codes(d, mess, rng.random(n) < mess.alternative_share),
        out.name: [f"{v:.{out.decimals}f}" for v in out.loc + out.scale * y],
    }
    columns.update(real or {})
    roles = {r_name: "running", d_name: "treatment", out.name: "outcome"}
    for name, role in roles.items():
        cells = columns[name]
        for i in np.flatnonzero(mess.blank_role == role):
            cells[i] = mess.tokens[int(rng.integers(len(mess.tokens)))]
    for cells in columns.values():
        for i in np.flatnonzero(rng.random(n) < mess.whitespace_share):
            cells[i] = " " + cells[i] if rng.random() < 0.5 else cells[i] + " "
    order = (theme.id_name, *(str(c) for c in rng.permutation(list(columns)[1:])))
    rows = [",".join(columns[c][i] for c in order) for i in range(n)]
    rows += [rows[i] for i in mess.duplicates]
    shuffled = [rows[i] for i in rng.permutation(len(rows))]
    text = ",".join(order) + "\n" + "\n".join(shuffled) + "\n"
    return Staged(text.encode("utf-8"), order)
