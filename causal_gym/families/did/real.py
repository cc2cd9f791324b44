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

import numpy as np
from numpy.typing import NDArray

from causal_gym.designs.candidate import ColumnDoc
from causal_gym.families.did.themes import YEARLY, Theme
from causal_gym.realdata.design_tables import DesignTable
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


def choose_states(table: DesignTable, staged_rows: int, rng: np.random.Generator) -> RealPanel:
    """The states of about `staged_rows` state-years, without replacement (`rng`: the
    scm stream)."""
    unit, period = table.one("unit").values, table.one("period").values
    adopted = table.one("adopted").values
    states = np.unique(unit)
    years = np.unique(period)
    n_units = round(staged_rows / years.size)
    chosen = np.sort(rng.choice(states, size=n_units, replace=False))
    grid = {(u, t): i for i, (u, t) in enumerate(zip(unit, period, strict=True))}
    rows = np.array([[grid[(u, t)] for t in years] for u in chosen])
    on = adopted[rows] > 0
    adoption = np.where(on.any(axis=1), on.argmax(axis=1), years.size).astype(np.int64)
    covariates = table.role("covariate")
    means = np.stack([c.values[rows].mean(axis=1) for c in covariates], axis=1)
    everyone = np.stack(
        [np.array([c.values[unit == s].mean() for s in states]) for c in covariates], axis=1
    )
    levels = (means - everyone.mean(axis=0)) / everyone.std(axis=0)
    cells = {
        c.name: np.array(c.cells(rows.ravel()), dtype=str).reshape(rows.shape) for c in covariates
    }
    docs = tuple(ColumnDoc(c.name, "numeric", f"{c.description}.") for c in covariates)
    return RealPanel(
        chosen.astype(np.int64), adoption, years.size, int(years[0]), levels, cells, docs
    )


def source_note(table: DesignTable) -> SourceNote:
    """The README's Source section for a real did task."""
    return SourceNote(table.title, table.citation, table.n_rows, generated=GENERATED)
