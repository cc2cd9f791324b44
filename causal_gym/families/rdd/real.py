"""The rdd family's real tier: the running variable and the households' covariates of a
real regression-discontinuity study (PANES, sources.toml), the design and outcome from
the hidden model.

Which households reach data.csv is a keyed subsample of the study's complete rows
(the data stream, after the model); each keeps its own predicted-income score, centred
at the programme's cutoff (eligible at or below it), so the rows near the cutoff are
as many as the study had, not as the model's density would give. The model reads the
score in units of PER_UNIT (the study's scores reach about 0.02 either side): u =
-score / PER_UNIT, eligible when u >= 0 as in every rdd model, and the anchor
integrates the study's own density (model.EmpiricalDensity). The covariates are staged
as the study recorded them and the hidden outcome does not depend on them: in a finite
table their local means jump at the cutoff by chance (Education and Age by about 0.2
SD at a bandwidth of 0.3), which would make the jump of the outcome's mean differ from
the effect by an amount no analyst could remove. They are what a real extract has for
balance checks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from causal_gym.designs.candidate import ColumnDoc
from causal_gym.families.rdd.model import EmpiricalDensity
from causal_gym.families.rdd.themes import Outcome, Running, Theme
from causal_gym.realdata.design_tables import DesignTable, design_table
from causal_gym.staging.source_note import SourceNote

#: Score units per model unit (model.py works on roughly [-1, 1]).
PER_UNIT = 0.02

PANES = Theme(
    key="panes",
    unit="household",
    units="households",
    titles=(
        "An income-tested cash transfer and support for the government",
        "Uruguay's PANES transfer at its eligibility cutoff",
    ),
    intros=(
        "Each row of data.csv is one household near the eligibility cutoff of PANES, the "
        "national emergency social programme Uruguay ran from 2005 to 2007. Eligibility "
        "was decided by a predicted-income score computed from a household survey.",
        "Records of households surveyed for PANES, Uruguay's income-tested cash transfer, "
        "one row per household: its predicted-income score centred at the eligibility "
        "cutoff, two of its survey measures, whether it received the transfer and its "
        "support for the government afterwards.",
    ),
    id_name="household_id",
    id_prefix="H",
    running=Running(
        "Income_Centered",
        "",  # from the source table
        PER_UNIT,
        1e-7,
        ("0",),
        False,
        "score points",
    ),
    treatment=("panes_transfer", "Whether the household received the PANES transfer."),
    outcome=Outcome(
        "gov_support_index",
        "Support for the government after the programme (index points).",
        60.0,
        4.0,
        1,
    ),
    sharp_rule="every household with a score at or below the cutoff received the transfer "
    "and no household above it did",
    fuzzy_rule="households with a score at or below the cutoff were offered the transfer; "
    "some never took it up, and some above the cutoff received it after a review",
    manipulation="Households could not steer their score: the agency predicted income from "
    "the survey with a formula that households did not know.",
    exclusion="Being at or below the cutoff changes support for the government only "
    "through the transfer; no other programme used this score.",
)

#: The story of each design source the family reads (sources.toml's rdd entries).
REAL_THEMES = {"gov_transfers": PANES}


@dataclass(frozen=True)
class RealRows:
    """The staged rows of a real task: u (model units), and the study's cells of the
    running variable and covariates on those rows, with their column docs."""

    u: np.ndarray
    cells: dict[str, list[str]]
    docs: tuple[ColumnDoc, ...]


@cache
def real_theme(source: str) -> Theme:
    """The real study's theme (one per design source), its running variable described
    in the source's words."""
    if source not in REAL_THEMES:
        raise ValueError(f"rdd has no real theme for source {source!r}: it has {list(REAL_THEMES)}")
    theme = REAL_THEMES[source]
    running = design_table(source).one("running")
    return replace(theme, running=replace(theme.running, description=f"{running.description}."))


@cache
def real_density(source: str) -> EmpiricalDensity:
    """The study's running variable's density in model units (once per process)."""
    return EmpiricalDensity.of(-design_table(source).one("running").values / PER_UNIT)


def real_rows(table: DesignTable, n: int, rng: np.random.Generator) -> RealRows:
    """A keyed subsample of n of the table's rows (`rng`: the data stream)."""
    rows = np.sort(rng.choice(table.n_rows, size=n, replace=False))
    running = table.one("running")
    cells = {running.name: running.cells(rows)}
    docs = []
    for column in table.role("covariate"):
        cells[column.name] = column.cells(rows)
        docs.append(ColumnDoc(column.name, "numeric", f"{column.description}."))
    return RealRows(-running.values[rows] / PER_UNIT, cells, tuple(docs))


def source_note(table: DesignTable) -> SourceNote:
    """The README's Source section for a real rdd task."""
    generated = (
        f"The intervention `{PANES.treatment[0]}` and the outcome `{PANES.outcome.name}` "
        "were generated from the study's records by a hidden model (a semi-synthetic "
        "design), so the true effect is known exactly."
    )
    return SourceNote(table.title, table.citation, table.n_rows, generated=generated)
