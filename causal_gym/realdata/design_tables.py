"""The design families' real tables (sources.toml's `design` entries), read once per
process and checked against their pins like the covariate sources (tables.py).

A design table is not a pool of roots for the shared SCM builder: its family reads it
whole. rdd reads a running variable and pre-treatment covariates; did reads a state
panel (unit, period, the real adoption dates) and time-varying covariates. Values stay
in the study's own units and precision (rounded to the declared decimals, where a
float32 column's extra digits are noise), so that staged cells are the study's cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from causal_gym.errors import RealDataError
from causal_gym.realdata.tables import catalogue, complete_rows


@dataclass(frozen=True)
class DesignColumn:
    """One column a design family reads: its role in the design and its README words."""

    name: str
    role: str  # "running", "covariate", "unit", "period", "adopted"
    description: str
    decimals: int
    values: np.ndarray = field(repr=False, compare=False)

    def cells(self, rows: np.ndarray) -> list[str]:
        """The column's cells on `rows`, written to its declared decimals with the
        trailing zeros dropped (as the study's own file writes them)."""
        out = []
        for value in self.values[rows]:
            text = f"{float(value):.{self.decimals}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            out.append("0" if text in ("-0", "") else text)
        return out


@dataclass(frozen=True)
class DesignTable:
    """A design source's complete rows and what the README says about them."""

    key: str
    family: str
    title: str
    citation: str
    n_rows: int
    columns: tuple[DesignColumn, ...]

    def role(self, role: str) -> tuple[DesignColumn, ...]:
        """The columns of one role, in the catalogue's order."""
        return tuple(c for c in self.columns if c.role == role)

    def one(self, role: str) -> DesignColumn:
        """The single column of a role (RealDataError otherwise)."""
        found = self.role(role)
        if len(found) != 1:
            raise RealDataError(f"design source {self.key} needs one {role} column")
        return found[0]


def design_sources(family: str) -> tuple[str, ...]:
    """The design sources a family's real tier draws from (none for most families)."""
    return tuple(entry["key"] for entry in catalogue("design") if entry["family"] == family)


def design_families() -> tuple[str, ...]:
    """The design families with a real tier, in the catalogue's order."""
    return tuple(dict.fromkeys(entry["family"] for entry in catalogue("design")))


@cache
def design_table(key: str) -> DesignTable:
    """The design source `key`, loaded and checked (once per process)."""
    entry, frame = complete_rows("design", key, "design source")
    columns = tuple(
        DesignColumn(
            spec["source"],
            spec["role"],
            spec["description"],
            int(spec.get("decimals", 0)),
            np.round(frame[spec["source"]].to_numpy(dtype=np.float64), spec.get("decimals", 0)),
        )
        for spec in entry["column"]
    )
    return DesignTable(key, entry["family"], entry["title"], entry["citation"], len(frame), columns)
