"""Names for a real-tier task: the table's own columns under their real names, codes
and units, and the columns the hidden model adds named from the source's pools.

The key still decides every name it can: which of the table's columns appear (the
SCM's build chose them), which treatment and outcome the study is said to have, and
which names the added pre-treatment and follow-up columns take. A name tells nothing
of a column's role: any table column may be a confounder in one task and noise in
the next, and an added pre-treatment column may be a simulated root in any role as
well as a latent's proxy or a decoy, named without regard to which.
"""

from __future__ import annotations

import numpy as np

from causal_gym.realdata.tables import RealColumn, RealTable
from causal_gym.scm.model import Kind, Scm, Timing
from causal_gym.staging.naming import (
    ColumnSpec,
    Naming,
    Theme,
    affine,
    numeric_spec,
    take,
    treatment_and_outcome,
)


def real_theme(table: RealTable) -> Theme:
    """The source as a theme: its unit, population and setting, and its pools."""
    pools = table.pools
    return Theme(
        key=f"real:{table.key}",
        unit=table.unit,
        population=table.population,
        setting=table.setting,
        treatment=pools["treatment"],
        outcome=pools["outcome"],
        continuous=pools["continuous"],
        binary=(),
        categorical=(),
        post=pools["post"],
    )


def real_spec(node_id: str, column: RealColumn) -> ColumnSpec:
    """A table column as staged: its values written back exactly (mean + sd times the
    standardized value, rounded to the column's own decimals)."""
    return ColumnSpec(
        node_id,
        column.name,
        Timing.PRE,
        column.kind,
        column.description,
        unit=column.unit,
        mean=column.mean,
        sd=column.sd,
        levels=column.levels,
        decimals=column.decimals,
        value_kind=column.value_kind,
        low=column.low,
        high=column.high,
        real=True,
    )


def name_real_columns(scm: Scm, table: RealTable, rng: np.random.Generator) -> Naming:
    """Every observed node's column: bound roots from the table, the rest from its pools."""
    if scm.real is None or scm.real.source != table.key:
        raise ValueError(f"the SCM is not bound to the real source {table.key}")
    theme = real_theme(table)
    columns = treatment_and_outcome(theme, rng)
    bound = dict(scm.real.columns)
    added: dict[Timing, list[str]] = {Timing.PRE: [], Timing.POST: []}
    for node in scm.nodes:
        if not node.observed or node.id in columns:
            continue
        if node.id in bound:
            columns[node.id] = real_spec(node.id, table.column(bound[node.id]))
            continue
        if node.kind is not Kind.CONTINUOUS or node.timing not in added:
            raise ValueError(f"a real task cannot name node {node.id} ({node.role.value})")
        added[node.timing].append(node.id)
    for timing, pool in ((Timing.PRE, theme.continuous), (Timing.POST, theme.post)):
        entries = take(affine(pool), len(added[timing]), rng)
        for node_id, entry in zip(added[timing], entries, strict=True):
            root = not scm.in_edges(node_id)  # a simulated root: drawn from its marginal
            columns[node_id] = numeric_spec(node_id, timing, entry, root=root)
    return Naming(theme, columns)
