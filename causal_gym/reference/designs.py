"""The design families' reference (iv, did, rdd): read the README's Design section and
data.csv, then hand the frame to the family's own module (design_<family>.py).

Self-contained like the rest of the kit: copied into a sandbox beside answer.py and
the family's module, and run there as `python designs.py DIR` (or through answer.py),
printing the submission JSON. Only numpy, pandas, scipy and statsmodels are used, the
analyst toolchain of both sandbox backends.

The Design section is a list of "- Key: value" lines; the keys every family writes
are FAMILY, ESTIMAND, TREATMENT, OUTCOME and MISSING (see DESIGN_KEYS), the rest are
the family's own (an instrument, a unit id, a running variable and its cutoff).
"""

from __future__ import annotations

import importlib
import io
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

Z90 = 1.6448536269514722
DESIGN_HEADING = "## Design"
FAMILY, ESTIMAND, TREATMENT, OUTCOME, MISSING = (
    "Family", "Estimand", "Treatment", "Outcome", "Missing values"
)  # fmt: skip
DESIGN_KEYS = (FAMILY, ESTIMAND, TREATMENT, OUTCOME, MISSING)
_FACT = re.compile(r"^- ([A-Za-z][A-Za-z0-9 ()/'-]*): (.+)$")


class DesignReadmeError(ValueError):
    """The README has no Design section, or it lacks a fact the family needs."""


class UnknownProbeError(ValueError):
    """A probe name the family's module does not have (its PROBES lists them)."""


@dataclass(frozen=True)
class DesignReadme:
    """The Design section's facts by key, in the README's order."""

    facts: dict[str, str]

    def __getitem__(self, key: str) -> str:
        try:
            return self.facts[key]
        except KeyError:
            raise DesignReadmeError(f"README.md's Design section has no {key!r} line") from None

    @property
    def family(self) -> str:
        """The design family (iv, did, rdd)."""
        return self[FAMILY]

    @property
    def missing_tokens(self) -> list[str]:
        """How a blank cell is written in data.csv (a comma-separated list of quoted tokens)."""
        return re.findall(r'"([^"]*)"', self[MISSING])

    def column(self, key: str) -> str:
        """A fact that names a column (written in backticks)."""
        return self[key].strip().strip("`")

    def number(self, key: str) -> float:
        """A fact that is one number (the first number in its line)."""
        found = re.search(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", self[key])
        if found is None:
            raise DesignReadmeError(f"README.md's {key!r} line holds no number")
        return float(found.group())


def is_design_readme(text: str) -> bool:
    """Whether a README is a design family's (it has the Design section)."""
    return f"\n{DESIGN_HEADING}\n" in text


def parse_design_readme(text: str) -> DesignReadme:
    """The Design section's facts; DesignReadmeError when there is none."""
    if not is_design_readme(text):
        raise DesignReadmeError("README.md has no '## Design' section")
    section = text.split(f"\n{DESIGN_HEADING}\n", 1)[1].split("\n## ", 1)[0]
    facts: dict[str, str] = {}
    for line in section.splitlines():
        matched = _FACT.match(line.strip())
        if matched:
            facts[matched.group(1)] = matched.group(2).strip()
    for key in DESIGN_KEYS:
        if key not in facts:
            raise DesignReadmeError(f"README.md's Design section has no {key!r} line")
    return DesignReadme(facts)


def read_frame(data: bytes, readme: DesignReadme) -> pd.DataFrame:
    """data.csv as text columns: cells stripped, the declared blank tokens as missing,
    exact duplicate rows dropped (a re-sent record is one observation, not two)."""
    frame = pd.read_csv(
        io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[], skipinitialspace=True
    )
    frame = frame.apply(lambda col: col.str.strip())
    frame = frame.replace({token: np.nan for token in readme.missing_tokens})
    return frame.drop_duplicates().reset_index(drop=True)


def to_number(column: pd.Series) -> pd.Series:
    """A numeric column from text: thousands separators removed, anything else that is
    not a number missing."""
    text = column.astype("string").str.replace(",", "", regex=False)
    return pd.to_numeric(text, errors="coerce").astype(float)


@dataclass(frozen=True)
class DesignFit:
    """The reference's answer: estimate, standard error (None where the interval is
    not estimate +- z SE, such as Anderson-Rubin's), the 90% interval, the rows used
    and the outcome's standard deviation on them (the observable scale)."""

    estimate: float
    se: float | None
    ci_lower: float
    ci_upper: float
    n_used: int
    scale: float

    @property
    def width(self) -> float:
        """The interval's width."""
        return self.ci_upper - self.ci_lower

    @property
    def finite(self) -> bool:
        """Whether the estimate and both ends are finite numbers."""
        return all(math.isfinite(v) for v in (self.estimate, self.ci_lower, self.ci_upper))


#: Grid points of a posterior over the disclosed effect range.
POSTERIOR_GRID = 4001


def effect_range(readme: DesignReadme) -> float:
    """The Effect range fact's half-width ("between -B and B ..."): the range the
    task's truth is drawn from, uniformly."""
    found = re.search(r"between -(\d+(?:\.\d+)?) and (\d+(?:\.\d+)?)", readme["Effect range"])
    if found is None or found.group(1) != found.group(2):
        raise DesignReadmeError("the Effect range fact is not 'between -B and B'")
    return float(found.group(1))


def grid_quantiles(grid: np.ndarray, log_like: np.ndarray) -> np.ndarray:
    """Rows of (median, 5%, 95%) of a posterior on `grid` (uniform prior over it) from
    each row's log likelihood."""
    weight = np.exp(log_like - log_like.max(axis=1, keepdims=True))
    cdf = np.cumsum(weight, axis=1)
    cdf = (cdf - 0.5 * weight) / cdf[:, -1:]  # each grid point's mass centred on it
    return np.array([np.interp([0.5, 0.05, 0.95], row, grid) for row in cdf])


def normal_posterior_quantiles(
    estimates: np.ndarray, se: float, bound: float, points: int = POSTERIOR_GRID
) -> np.ndarray:
    """Rows of (median, 5%, 95%) of the effect under a uniform prior on [-bound, bound]
    and a normal likelihood N(estimate, se^2), one row per estimate."""
    grid = np.linspace(-bound, bound, points)
    gap = (np.asarray(estimates, dtype=float)[:, None] - grid[None, :]) / se
    return grid_quantiles(grid, -0.5 * gap * gap)


def family_module(family: str) -> Any:
    """The family's module of the kit, inside the package or beside this file."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", family):
        raise DesignReadmeError(f"README.md names an unknown design family {family!r}")
    try:
        return importlib.import_module(f"causal_gym.reference.design_{family}")
    except ImportError:
        return importlib.import_module(f"design_{family}")


def design_fit(files: dict[str, bytes], probe: str | None = None) -> DesignFit:
    """The family's reference fit on the staged files (`probe`: one of the family's
    named hack probes instead, for the audit)."""
    readme = parse_design_readme(files["README.md"].decode("utf-8"))
    frame = read_frame(files["data.csv"], readme)
    module = family_module(readme.family)
    if probe is None:
        return module.fit(frame, readme)
    return module.probe(probe, frame, readme)


def files_answer(files: dict[str, bytes], probe: str | None = None) -> dict[str, object]:
    """The submission JSON for a design task's staged files."""
    readme = parse_design_readme(files["README.md"].decode("utf-8"))
    fit = design_fit(files, probe)
    return {
        "estimand": readme[ESTIMAND],
        "estimate": fit.estimate,
        "ci_lower": fit.ci_lower,
        "ci_upper": fit.ci_upper,
    }


def main(argv: list[str] | None = None) -> int:
    """`python designs.py DIR [--probe NAME]`: print the answer for the task in DIR."""
    args = sys.argv[1:] if argv is None else argv
    probe = None
    if len(args) == 3 and args[1] == "--probe":
        probe, args = args[2], args[:1]
    if len(args) != 1:
        print("usage: python designs.py DIR [--probe NAME]", file=sys.stderr)
        return 2
    directory = Path(args[0])
    try:
        files = {name: (directory / name).read_bytes() for name in ("README.md", "data.csv")}
    except OSError as exc:
        print(f"design reference: {directory} needs README.md and data.csv: {exc}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(files_answer(files, probe)))
    except UnknownProbeError as exc:  # a bad argument
        print(f"design reference: {exc}", file=sys.stderr)
        return 2
    except (DesignReadmeError, ArithmeticError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        print(f"design reference: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
