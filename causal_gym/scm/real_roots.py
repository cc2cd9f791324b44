"""Roots of a real-tier SCM: columns of a real table, resampled by rows.

A real task's observed pre-treatment roots are not drawn from marginals: they are the
columns of a real table (causal_gym/realdata/), taken together row by row, so their
skew, heaping, codes and correlations are the study's. The table's rows are the
population: its exact truth is a mean over them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RealRoots:
    """Which root is which column of source `source` (`columns`: node id -> column
    name), and the values the sampler reads (`values`: node id -> standardized values
    or integer codes, one per table row)."""

    source: str
    table_rows: int
    columns: tuple[tuple[str, str], ...]
    values: Mapping[str, np.ndarray] = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        if {node_id for node_id, _ in self.columns} != set(self.values):
            raise ValueError("real roots: every bound node needs its values")
        if any(len(v) != self.table_rows for v in self.values.values()):
            raise ValueError("real roots: every column needs one value per table row")

    def column_of(self, node_id: str) -> str:
        return dict(self.columns)[node_id]

    def rows(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Row indices of a sample of n. A sample no larger than the table is a
        subsample of it (a study records each person once); a larger one is a Monte
        Carlo of the population the rows are, drawn with replacement."""
        return rng.choice(self.table_rows, size=n, replace=n > self.table_rows)

    def restricted(self, node_ids: Iterable[str]) -> RealRoots | None:
        """The binding cut down to `node_ids` (None when none of them is bound)."""
        keep = set(node_ids)
        columns = tuple((i, c) for i, c in self.columns if i in keep)
        if not columns:
            return None
        values = {i: self.values[i] for i, _ in columns}
        return RealRoots(self.source, self.table_rows, columns, values)
