"""The `did` reference: the imputation estimator of Borusyak, Jaravel and Spiess on the
long-format panel, with a 90% interval from its unit-clustered standard error; and its
naive probes.

Self-contained like the rest of the kit (numpy and pandas; design_did_fe.py does the
fitting). The README's Design section names the unit id (and how its spellings vary),
the period (month, quarter or year) and its date column, the adoption column and how a unit
that never adopts is written there. Reading undoes the declared mess: ids are reduced
to their number, dates in any declared format become a period count, the adoption date
is the one a unit's rows carry (some rows have it blank), rows without a date or an
outcome are dropped, and a unit-period is kept once.

- fit: unit and period effects fitted on the untreated unit-periods, the treated ones'
  untreated outcomes imputed from them, the average of y - imputed over the treated;
  its SE clusters by unit (design_did_fe.imputation).

Every interval is estimate +- q SE with q the t quantile at an effective number of
clusters: the estimators are linear, sum omega_it y_it, and a unit's share of the
clustered variance is roughly proportional to a_i = sum_t omega_it^2, so the variance
estimate has about (sum a_i)^2 / sum a_i^2 degrees of freedom (Satterthwaite). When a
few units carry most of the weight (a small comparison group) that is far below the
number of units, and the normal quantile would undercover.
- probes: "twfe" (OLS of y on the treated indicator with unit and period effects,
  clustered SE: biased when effects grow with time since adoption under staggered
  adoption) and "post_minus_pre" (the adopting units' mean after adoption minus their
  mean before, no comparison group: it takes the common trend for the effect).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

try:  # inside the package
    from causal_gym.reference import design_did_fe as fe
    from causal_gym.reference import designs
except ImportError:  # copied into a sandbox next to designs.py
    import design_did_fe as fe  # type: ignore[no-redef,import-not-found]
    import designs  # type: ignore[no-redef,import-not-found]

UNIT, PERIOD, DATE, ADOPTION, NEVER = (
    "Unit id", "Period", "Date column", "Adoption column", "Never-adopter code"
)  # fmt: skip
PROBES = ("twfe", "post_minus_pre")
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ID = re.compile(r"^([A-Z]+)0*(\d+)$")
_YM = re.compile(r"^(\d{4})-(\d{1,2})(?:-\d{1,2})?$")
_MY = re.compile(r"^(\d{1,2})/(\d{4})$")
_NAMED = re.compile(r"^([A-Za-z]+)\.?\s+(\d{4})$")
_YQ = re.compile(r"^(\d{4})\s*-?\s*Q([1-4])$", re.IGNORECASE)
_QY = re.compile(r"^Q([1-4])\s+(\d{4})$", re.IGNORECASE)
_Y = re.compile(r"^(?:FY\s*)?(\d{4})$", re.IGNORECASE)


def unit_number(text: str) -> float:
    """An id's unit: case, a hyphen or space after the prefix and leading zeros dropped
    (NaN where it is no id)."""
    found = _ID.match(re.sub(r"[\s-]", "", text.upper()))
    return float(found.group(2)) if found else float("nan")


def period_index(text: str, season: int) -> float:
    """A date as periods since year 0 (months or quarters), from any of the declared
    formats (NaN where it is none of them)."""
    text = text.strip()
    if season == 1:
        found = _Y.match(text)
        return float(found.group(1)) if found else float("nan")
    if season == 4:
        found = _YQ.match(text)
        if found:
            return 4.0 * int(found.group(1)) + int(found.group(2)) - 1
        found = _QY.match(text)
        return 4.0 * int(found.group(2)) + int(found.group(1)) - 1 if found else float("nan")
    month: int | None = None
    if found := _YM.match(text):
        year, month = int(found.group(1)), int(found.group(2))
    elif found := _MY.match(text):
        year, month = int(found.group(2)), int(found.group(1))
    elif (found := _NAMED.match(text)) and found.group(1)[:3].lower() in MONTHS:
        year, month = int(found.group(2)), MONTHS.index(found.group(1)[:3].lower()) + 1
    if month is None or not 1 <= month <= 12:
        return float("nan")
    return 12.0 * year + month - 1


def _named(readme: designs.DesignReadme, key: str) -> str:
    """The column a fact names: its first name in backticks."""
    found = re.search(r"`([^`]+)`", readme[key])
    if found is None:
        raise designs.DesignReadmeError(f"README.md's {key!r} line names no column")
    return found.group(1)


def _mapped(column: pd.Series, parse: Callable[[str], float]) -> np.ndarray:
    """A text column through `parse`, once per distinct value (NaN where missing)."""
    table = {v: parse(v) for v in column.dropna().unique()}
    return column.map(table).to_numpy(dtype=float)


@dataclass(frozen=True)
class Panel:
    """The usable unit-periods, each once: cells, treated indicator, the effect group
    of a treated cell (cohort x event time), the outcome, and which units adopt."""

    cells: fe.Cells
    treated: np.ndarray
    group: np.ndarray
    y: np.ndarray
    adopter: np.ndarray  # per unit index


def read_panel(frame: pd.DataFrame, readme: designs.DesignReadme) -> Panel:
    """The panel from data.csv's text cells (module docstring: the mess undone)."""
    noun = readme[PERIOD].strip().lower()
    season = 4 if noun.startswith("quarter") else 1 if noun.startswith("year") else 12
    unit = _mapped(frame[_named(readme, UNIT)], unit_number)
    period = _mapped(frame[_named(readme, DATE)], lambda v: period_index(v, season))
    adoption_text = frame[_named(readme, ADOPTION)]
    never = set(re.findall(r'"([^"]*)"', readme.facts.get(NEVER, "")))
    adoption = _mapped(
        adoption_text, lambda v: np.inf if v.strip().lower() in never else period_index(v, season)
    )
    y = designs.to_number(frame[_named(readme, designs.OUTCOME)]).to_numpy(float)
    known = pd.Series(adoption).groupby(pd.Series(unit)).first()  # the unit's date
    adoption = pd.Series(unit).map(known).to_numpy(float)
    keep = np.isfinite(unit) & np.isfinite(period) & np.isfinite(y) & ~np.isnan(adoption)
    table = pd.DataFrame({"u": unit[keep], "t": period[keep], "g": adoption[keep], "y": y[keep]})
    table = table.drop_duplicates(subset=["u", "t"]).reset_index(drop=True)
    u_codes, u_levels = pd.factorize(table["u"], sort=True)
    t0 = float(table["t"].min())
    t_index = (table["t"] - t0).to_numpy().astype(np.int64)
    g = table["g"].to_numpy(float)
    cells = fe.Cells(np.asarray(u_codes, dtype=np.int64), t_index, len(u_levels),
                     int(t_index.max()) + 1)  # fmt: skip
    treated = table["t"].to_numpy(float) >= g
    event = np.where(treated, table["t"].to_numpy(float) - g, -1.0)
    group = np.where(treated, np.where(np.isfinite(g), g, 0.0) * 1000.0 + event, -1.0)
    adopter = np.bincount(cells.unit, weights=treated.astype(float), minlength=cells.n_units) > 0
    return Panel(cells, treated, group.astype(np.int64), table["y"].to_numpy(float), adopter)


def effective_clusters(unit: np.ndarray, weights: np.ndarray) -> float:
    """(sum a_i)^2 / sum a_i^2 with a_i = sum_t w_it^2 (module docstring)."""
    a = np.bincount(unit, weights=np.asarray(weights, dtype=float) ** 2)
    total = float(np.sum(a**2))
    return float(a.sum() ** 2 / total) if total > 0 else float("nan")


def _answer(
    estimate: float, se: float, y: np.ndarray, unit: np.ndarray, weights: np.ndarray
) -> designs.DesignFit:
    df = effective_clusters(unit, weights)
    q = float(stats.t.ppf(0.95, max(df - 1.0, 1.0))) if np.isfinite(df) else designs.Z90
    return designs.DesignFit(
        estimate=estimate,
        se=se,
        ci_lower=estimate - q * se,
        ci_upper=estimate + q * se,
        n_used=int(y.size),
        scale=float(np.std(y, ddof=1)),
    )


def fit(frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """The imputation estimate with its unit-clustered 90% interval."""
    panel = read_panel(frame, readme)
    result = fe.imputation(panel.cells, panel.treated, panel.group, panel.y)
    used = result.omega != 0
    return _answer(result.estimate, result.se, panel.y[used], panel.cells.unit, result.omega)


def post_minus_pre(panel: Panel) -> tuple[float, float, np.ndarray]:
    """The adopting units' mean outcome after adoption minus before, with a
    unit-clustered SE of the difference in means."""
    rows = panel.adopter[panel.cells.unit]
    d, y = panel.treated[rows], panel.y[rows]
    n1, n0 = int(d.sum()), int((~d).sum())
    if n1 == 0 or n0 == 0:
        return float("nan"), float("nan"), np.zeros(0)
    m1, m0 = float(y[d].mean()), float(y[~d].mean())
    influence = np.where(d, (y - m1) / n1, -(y - m0) / n0)
    clusters = np.bincount(panel.cells.unit[rows], weights=influence, minlength=panel.cells.n_units)
    g = int(panel.adopter.sum())
    se = float(np.sqrt(g / max(g - 1, 1) * np.sum(clusters**2)))
    return m1 - m0, se, np.where(d, 1.0 / n1, -1.0 / n0)


def probe(name: str, frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """One of PROBES: what a naive analyst of the design would answer."""
    panel = read_panel(frame, readme)
    if name == "twfe":
        result = fe.twfe(panel.cells, panel.treated, panel.y)
        return _answer(result.estimate, result.se, panel.y, panel.cells.unit, result.d_tilde)
    if name == "post_minus_pre":
        estimate, se, weights = post_minus_pre(panel)
        rows = panel.adopter[panel.cells.unit]
        return _answer(estimate, se, panel.y[rows], panel.cells.unit[rows], weights)
    raise designs.UnknownProbeError(
        f"unknown did probe {name!r}; the probes are {', '.join(PROBES)}"
    )
