"""Staging a did panel as a real long-format extract: one row per unit-period with the
unit's id (spelled several declared ways), the period's date (in the extract's usual
format, some rows in a second declared one), the unit's adoption date (the same on
every row of a unit; a word for units that never adopt), the outcome and an attribute
that plays no part in the design. Some unit-periods have no row, some rows were sent
twice, some cells are blank in the declared spellings, some carry stray spaces.
Every kind of mess is declared in the README's Data notes (dictionary.py), so an
honest analyst can undo it, and the reference kit does (reference/design_did.py).

The mess is drawn from the `messiness` stream from the panel's shape alone, before
any outcome exists: which unit-periods an analysis can use (a row present, its date
and outcome not blank) never depends on an outcome, so the set of treated
unit-periods the estimand averages over is fixed by the design and the truth is an
exact average of the model's effects over it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from causal_gym.designs.spelling import TOKEN_SETS
from causal_gym.families.did.themes import Theme
from causal_gym.plan.tiers import TierSpec

#: How a unit that never adopts is written in the adoption column (one per task).
NEVER_WORDS = ("never", "none", "not adopted")
#: Ways a unit id is written besides the canonical PREFIX0042: lower case, a hyphen or
#: a space after the prefix, no leading zeros.
ID_VARIANTS = ("canonical", "lower", "hyphen", "space", "unpadded")
#: Share of rows whose outcome (else date) is the blank cell of an incomplete row.
_OUTCOME_BLANK_SHARE = 0.8
_WHITESPACE = {"easy": 0.005, "medium": 0.015, "hard": 0.03, "expert": 0.03, "real": 0.015}


@dataclass(frozen=True)
class Mess:
    """What staging will do to the full panel (n_units x n_periods), drawn before any
    outcome: which unit-periods have a row, which of those have a blank outcome or
    date, which have a blank adoption or attribute cell (cosmetic: the unit's other
    rows carry it), how each row spells the id and the date, and re-sent rows."""

    present: NDArray[np.bool_]
    blank_outcome: NDArray[np.bool_]
    blank_date: NDArray[np.bool_]
    blank_adoption: NDArray[np.bool_]
    blank_attribute: NDArray[np.bool_]
    id_variant: NDArray[np.int64]
    date_alternative: NDArray[np.bool_]
    duplicates: NDArray[np.int64]  # indices into the present cells (row-major order)
    tokens: tuple[str, ...]
    never_word: str
    whitespace_share: float

    @property
    def usable(self) -> NDArray[np.bool_]:
        """The unit-periods an analysis can use: a row with its date and outcome."""
        return np.asarray(self.present & ~self.blank_outcome & ~self.blank_date)

    @property
    def n_rows(self) -> int:
        """data.csv's rows: the present unit-periods and the re-sent copies."""
        return int(self.present.sum()) + int(self.duplicates.size)


def plan_mess(spec: TierSpec, n_units: int, n_periods: int, rng: np.random.Generator) -> Mess:
    """The task's mess for a panel of this shape (`rng`: the messiness stream)."""
    shape = (n_units, n_periods)
    missing = float(rng.uniform(*spec.missing_row_fraction))
    present = rng.random(shape) >= missing / 2  # half the incomplete unit-periods lack a row
    incomplete = present & (rng.random(shape) < missing / 2)
    outcome_side = rng.random(shape) < _OUTCOME_BLANK_SHARE
    blank_adoption = present & (rng.random(shape) < missing / 2)
    for i in range(n_units):  # every unit keeps its adoption date on one of its rows
        rows = np.flatnonzero(present[i])
        if rows.size and blank_adoption[i, rows].all():
            blank_adoption[i, rows[0]] = False
    n_present = int(present.sum())
    n_dup = round(n_present * float(rng.uniform(*spec.duplicate_fraction)))
    alternative = float(rng.uniform(*spec.alternative_coding_fraction)) + 0.02
    variant = np.where(
        rng.random(shape) < alternative, rng.integers(1, len(ID_VARIANTS), size=shape), 0
    )
    return Mess(
        present=present,
        blank_outcome=incomplete & outcome_side,
        blank_date=incomplete & ~outcome_side,
        blank_adoption=blank_adoption,
        blank_attribute=present & (rng.random(shape) < missing / 2),
        id_variant=variant.astype(np.int64),
        date_alternative=rng.random(shape) < alternative,
        duplicates=rng.choice(n_present, size=n_dup).astype(np.int64),
        tokens=TOKEN_SETS[int(rng.integers(len(TOKEN_SETS)))],
        never_word=NEVER_WORDS[int(rng.integers(len(NEVER_WORDS)))],
        whitespace_share=_WHITESPACE[spec.tier.value],
    )


@dataclass(frozen=True)
class Staged:
    """data.csv's bytes and its column order."""

    data_csv: bytes
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Dates:
    """How the task writes periods: period 0 is calendar index `start` (counted from
    year 0's first period), `usual` the extract's format, `other` the second one."""

    start: int
    usual: str
    other: str


def spell_id(prefix: str, number: int, variant: int) -> str:
    """A unit id in one of ID_VARIANTS (the canonical one pads to four digits)."""
    name = ID_VARIANTS[variant]
    if name == "lower":
        return f"{prefix.lower()}{number:04d}"
    if name == "hyphen":
        return f"{prefix}-{number:04d}"
    if name == "space":
        return f"{prefix} {number:04d}"
    if name == "unpadded":
        return f"{prefix}{number}"
    return f"{prefix}{number:04d}"


def stage_rows(
    y: NDArray[np.float64],
    adoption: NDArray[np.int64],
    never: NDArray[np.bool_],
    theme: Theme,
    dates: Dates,
    mess: Mess,
    rng: np.random.Generator,
    real: tuple[NDArray[np.int64], dict[str, NDArray[np.str_]]] | None = None,
) -> Staged:
    """The staged bytes of data.csv: `y` the full panel's outcomes in model units,
    `adoption` each unit's adoption period (`never`: written as the never word)
    (`rng`: the messiness stream, after plan_mess). `real`: a real panel's unit ids
    and its columns' cells (units x periods), which replace the drawn ids and the
    attribute (the real tier)."""
    n_units, _ = y.shape
    calendar = theme.calendar
    numbers = rng.choice(np.arange(1, 10_000), size=n_units, replace=False)
    levels = theme.attribute_levels
    attribute = np.asarray(rng.integers(len(levels), size=n_units)).tolist()
    adopted = [
        mess.never_word if never[i] else calendar.write(dates.start + int(adoption[i]), dates.usual)
        for i in range(n_units)
    ]
    date_col, out_col = calendar.noun, theme.outcome
    extra: dict[str, NDArray[np.str_]] = {}
    if real is not None:
        numbers, extra = real
    names = (theme.id_column, date_col, theme.adoption_column, out_col,
             *(extra or (theme.attribute,)))  # fmt: skip
    staged_y = theme.loc + theme.scale * y
    fmt = f"{{:.{theme.decimals}f}}"
    records: list[list[str]] = []
    for i, t in zip(*np.nonzero(mess.present), strict=True):
        style = dates.other if mess.date_alternative[i, t] else dates.usual
        cells = [
            spell_id(theme.id_prefix, int(numbers[i]), int(mess.id_variant[i, t])),
            calendar.write(dates.start + int(t), style),
            adopted[i],
            fmt.format(staged_y[i, t]),
            *([str(v[i, t]) for v in extra.values()] or [levels[attribute[i]]]),
        ]
        for j, blank in ((1, mess.blank_date), (2, mess.blank_adoption), (3, mess.blank_outcome),
                         (4, mess.blank_attribute)):  # fmt: skip
            if blank[i, t]:
                cells[j] = mess.tokens[int(rng.integers(len(mess.tokens)))]
        records.append(cells)
    spaced = rng.random((len(records), len(names))) < mess.whitespace_share
    sides = rng.random((len(records), len(names))) < 0.5
    for r, c in zip(*(a.tolist() for a in np.nonzero(spaced)), strict=True):
        records[r][c] = " " + records[r][c] if sides[r, c] else records[r][c] + " "
    order = (names[0], *(names[int(k) + 1] for k in rng.permutation(len(names) - 1)))
    index = [names.index(c) for c in order]
    rows = [",".join(cells[k] for k in index) for cells in records]
    rows += [rows[int(k)] for k in mess.duplicates]
    shuffled = [rows[int(k)] for k in rng.permutation(len(rows))]
    text = ",".join(order) + "\n" + "\n".join(shuffled) + "\n"
    return Staged(text.encode("utf-8"), order)
