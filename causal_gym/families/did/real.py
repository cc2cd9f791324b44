"""The did family's real tier: a real state panel (the castle-doctrine data, sources.toml)
whose adoption dates are the design, with the outcome from the hidden model.

Which states reach data.csv is a keyed subsample of the study's 50 (the scm stream,
first: the model's cohorts are the adoption years of the states chosen). Each keeps
the year its castle-doctrine law first applied for most of a year (the study's `post`
switching on; 2006-2010 for 21 states), the others never adopt within the panel; the
state-years carry the study's unemployment, poverty and income. The hidden outcome's
state levels load on the state's mean covariates (so levels differ across states as
a real outcome's do), never on their year-to-year movement: parallel trends holds
exactly, as the README states, and the truth stays the model's exact average effect.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from causal_gym.designs.candidate import ColumnDoc
from causal_gym.families.did.themes import YEARLY, Theme
from causal_gym.realdata.design_tables import DesignTable, design_table
from causal_gym.staging.source_note import SourceNote

CASTLE = Theme(
    key="castle",
    unit="state",
    units="states",
    id_column="state_id",
    id_prefix="ST",
    calendar=YEARLY,
    program="the castle-doctrine law",
    adopt_verb="put its castle-doctrine law into effect",
    adoption_column="castle_law_year",
    outcome="homicide_rate",
    outcome_noun="yearly homicide rate",
    outcome_description="Homicides per 100,000 residents in the year.",
    loc=5.0,
    scale=0.5,
    decimals=2,
    attribute="",
    attribute_description="",
    attribute_levels=("",),
    titles=(
        "Castle-doctrine laws and homicide across US states",
        "Self-defence law expansions, state by state, 2000-2010",
    ),
    intros=(
        "Between 2005 and 2010 about twenty US states expanded castle-doctrine law, widening "
        "the right to use lethal force in self-defence outside the home. Each row of data.csv "
        "is one state in one year.",
        "A state-year panel of the United States, 2000-2010: the year each state's "
        "castle-doctrine law took effect, its homicide rate, and three of its economic "
        "measures.",
    ),
)

#: What the README's Source section says was generated (the adoption dates are real).
GENERATED = (
    "The adoption years of `castle_law_year` and the economic columns are the study's; "
    "the outcome `homicide_rate` was generated from the states' records by a hidden model "
    "(a semi-synthetic design), so the true effect is known exactly."
)

#: The story of each design source the family reads (sources.toml's did entries).
REAL_THEMES = {"castle": CASTLE}


def real_theme(source: str) -> Theme:
    """The real study's theme (ValueError naming the known ones otherwise)."""
    if source not in REAL_THEMES:
        raise ValueError(f"did has no real theme for source {source!r}: it has {list(REAL_THEMES)}")
    return REAL_THEMES[source]


@dataclass(frozen=True)
class RealPanel:
    """The chosen states: their ids, adoption periods (n_periods where the state never
    adopts in the panel), their standardized mean covariates, and the study's cells
    of each covariate (units x periods), with the covariates' column docs."""

    ids: NDArray[np.int64]
    adoption: NDArray[np.int64]
    n_periods: int
    first_year: int
    levels: NDArray[np.float64]
    cells: dict[str, NDArray[np.str_]]
    docs: tuple[ColumnDoc, ...]


@dataclass(frozen=True)
class _Layout:
    """A panel table laid out once per process: its states and years, each state's
    row of every year, adoption period and mean covariates, the covariate cells."""

    states: NDArray[np.float64]
    years: NDArray[np.float64]
    adoption: NDArray[np.int64]
    means: NDArray[np.float64]  # per state, its own years' mean of each covariate
    centre: NDArray[np.float64]
    spread: NDArray[np.float64]
    cells: dict[str, NDArray[np.str_]]
    docs: tuple[ColumnDoc, ...]


@cache
def _layout(key: str) -> _Layout:
    table = design_table(key)
    unit, period = table.one("unit").values, table.one("period").values
    states, years = np.unique(unit), np.unique(period)
    grid = {(u, t): i for i, (u, t) in enumerate(zip(unit, period, strict=True))}
    rows = np.array([[grid[(u, t)] for t in years] for u in states])
    on = table.one("adopted").values[rows] > 0
    adoption = np.where(on.any(axis=1), on.argmax(axis=1), years.size).astype(np.int64)
    covariates = table.role("covariate")
    means = np.stack([c.values[rows].mean(axis=1) for c in covariates], axis=1)
    everyone = np.stack(
        [np.array([c.values[unit == s].mean() for s in states]) for c in covariates], axis=1
    )
    cells = {
        c.name: np.array(c.cells(rows.ravel()), dtype=str).reshape(rows.shape) for c in covariates
    }
    docs = tuple(ColumnDoc(c.name, "numeric", f"{c.description}.") for c in covariates)
    return _Layout(
        states, years, adoption, means, everyone.mean(axis=0), everyone.std(axis=0), cells, docs
    )


def choose_states(table: DesignTable, staged_rows: int, rng: np.random.Generator) -> RealPanel:
    """The states of about `staged_rows` state-years, without replacement (`rng`: the
    scm stream); the table's layout is worked out once per process."""
    layout = _layout(table.key)
    n_units = round(staged_rows / layout.years.size)
    chosen = np.sort(rng.choice(layout.states, size=n_units, replace=False))
    index = np.searchsorted(layout.states, chosen)
    return RealPanel(
        chosen.astype(np.int64),
        layout.adoption[index],
        layout.years.size,
        int(layout.years[0]),
        (layout.means[index] - layout.centre) / layout.spread,
        {name: cells[index] for name, cells in layout.cells.items()},
        layout.docs,
    )


def source_note(table: DesignTable) -> SourceNote:
    """The README's Source section for a real did task."""
    return SourceNote(table.title, table.citation, table.n_rows, generated=GENERATED)
