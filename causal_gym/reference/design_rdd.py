"""The `rdd` reference: local linear regression at the cutoff with a data-driven
bandwidth and a robust bias-corrected likelihood, combined with the README's disclosed
effect range; and its naive probes.

Self-contained like the rest of the kit (numpy and pandas; design_rdd_local.py does the
fitting). The README's Design section names the running variable, how it is written
(a number, or a date in a declared strftime format, measured in days), the cutoff,
which side of it is eligible, and the treatment's coding.

- fit: the Imbens-Kalyanaraman MSE-optimal bandwidth h for the local linear fit
  (fuzzy: for Y - t D, with t a pilot local Wald ratio), then the local quadratic fit
  at the same h with the triangular kernel and HC1 standard errors: the rho = 1 robust
  bias-corrected estimate and interval of Calonico, Cattaneo and Titiunik. A fuzzy
  design's estimate is the ratio of the outcome's jump to the treatment's (the local
  Wald), its SE by the delta method. The answer is the posterior under the disclosed
  effect range (uniform, the prior the truth is drawn from) with the normal likelihood
  of that estimate and SE: its median and 5% and 95% quantiles (designs.py), the Bayes
  rule for the interval score over tasks drawn from the range.
- probes: "robust_bias_corrected" (that interval alone, the range ignored),
  "global_polynomial" (a quartic on all rows of each side, classical SE),
  "narrow_bandwidth" (local linear at h / 4, conventional HC1 interval),
  "wide_bandwidth" (a straight line on all rows of each side, HC1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

try:  # inside the package
    from causal_gym.reference import design_rdd_local as local
    from causal_gym.reference import designs
except ImportError:  # copied into a sandbox next to designs.py
    import design_rdd_local as local  # type: ignore[no-redef,import-not-found]
    import designs  # type: ignore[no-redef,import-not-found]

RUNNING, RUNNING_FORMAT, CUTOFF, ELIGIBLE, CODING = (
    "Running variable", "Running variable format", "Cutoff", "Eligible side", "Treatment coding"
)  # fmt: skip
FUZZY_ESTIMAND = "complier_effect_at_cutoff"
PROBES = ("robust_bias_corrected", "global_polynomial", "narrow_bandwidth", "wide_bandwidth")
_TICKED = re.compile(r"`([^`]*)`")


@dataclass(frozen=True)
class RddData:
    """Complete rows: the running variable from the cutoff (eligible side >= 0), the
    treatment (0/1, None in a sharp design, where it is eligibility) and the outcome."""

    x: np.ndarray
    d: np.ndarray | None
    y: np.ndarray


def running_values(frame: pd.DataFrame, readme: designs.DesignReadme) -> pd.Series:
    """The running variable measured from the cutoff: a number minus the cutoff, or a
    date's days from the cutoff date (both written in the declared format), signed so
    that the eligible side is >= 0."""
    column = frame[readme.column(RUNNING)]
    written = readme[RUNNING_FORMAT]
    if written.lower().startswith("a date"):
        found = _TICKED.search(written)
        if found is None:
            raise designs.DesignReadmeError("the running variable's date format is not declared")
        fmt = found.group(1)
        cutoff = pd.to_datetime(readme[CUTOFF].split(" (")[0].strip(), format=fmt)
        dates = pd.to_datetime(column, format=fmt, errors="coerce")
        values = (dates - cutoff).dt.days.astype(float)
    else:
        values = designs.to_number(column) - readme.number(CUTOFF)
    side = readme[ELIGIBLE].lower()
    flipped = any(word in side for word in ("below", "before", "under"))
    return -values if flipped else values


def treatment_values(column: pd.Series, readme: designs.DesignReadme) -> pd.Series:
    """The treatment as 1.0 / 0.0 from its declared coding ("treated: `a`, `b`;
    untreated: `c`, `d`"), anything else missing."""
    codes: dict[str, float] = {}
    for part in readme[CODING].split(";"):
        label = part.split(":")[0].strip().lower()
        value = (
            0.0 if label.startswith("untreated") else 1.0 if label.startswith("treated") else None
        )
        if value is not None:
            codes.update({code: value for code in _TICKED.findall(part)})
    if set(codes.values()) != {0.0, 1.0}:
        raise designs.DesignReadmeError("the treatment's coding is not declared")
    return column.map(codes).astype(float)


def rdd_data(frame: pd.DataFrame, readme: designs.DesignReadme) -> RddData:
    """The complete rows of the columns the design needs."""
    x = running_values(frame, readme)
    y = designs.to_number(frame[readme.column(designs.OUTCOME)])
    fuzzy = readme[designs.ESTIMAND] == FUZZY_ESTIMAND
    d = treatment_values(frame[readme.column(designs.TREATMENT)], readme) if fuzzy else None
    keep = x.notna() & y.notna() & (d.notna() if d is not None else True)
    return RddData(
        x.to_numpy(float)[keep],
        d.to_numpy(float)[keep] if d is not None else None,
        y.to_numpy(float)[keep],
    )


def bandwidth(data: RddData) -> float:
    """The MSE-optimal local linear bandwidth (fuzzy: for Y - t D, t a pilot ratio)."""
    h = local.ik_bandwidth(data.x, data.y)
    if data.d is None:
        return h
    pilot, _ = local.wald(local.local_jump(data.x, h, 1), data.y, data.d)
    return local.ik_bandwidth(data.x, data.y - pilot * data.d)


def _answer(data: RddData, jump: local.Jump, robust: bool = True) -> designs.DesignFit:
    estimate, se = local.wald(jump, data.y, data.d, robust)
    used = np.concatenate([data.y[jump.below.rows], data.y[jump.above.rows]])
    return designs.DesignFit(
        estimate=estimate,
        se=se,
        ci_lower=estimate - designs.Z90 * se,
        ci_upper=estimate + designs.Z90 * se,
        n_used=jump.n_used,
        scale=float(np.std(used, ddof=1)),
    )


def _robust(data: RddData) -> designs.DesignFit:
    return _answer(data, local.local_jump(data.x, bandwidth(data), 2))


def fit(frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """The posterior under the disclosed range with the robust bias-corrected
    likelihood (module docstring)."""
    robust = _robust(rdd_data(frame, readme))
    assert robust.se is not None
    bound = designs.effect_range(readme)
    [(median, low, high)] = designs.normal_posterior_quantiles(
        np.array([robust.estimate]), robust.se, bound
    )
    return designs.DesignFit(
        float(median), None, float(low), float(high), robust.n_used, robust.scale
    )


def probe(name: str, frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """One of PROBES: what a naive analyst of the design would answer."""
    data = rdd_data(frame, readme)
    if name == "robust_bias_corrected":
        return _robust(data)
    if name == "global_polynomial":
        return _answer(data, local.local_jump(data.x, np.inf, 4, "uniform"), robust=False)
    if name == "narrow_bandwidth":
        return _answer(data, local.local_jump(data.x, bandwidth(data) / 4, 1))
    if name == "wide_bandwidth":
        return _answer(data, local.local_jump(data.x, np.inf, 1, "uniform"))
    raise designs.UnknownProbeError(
        f"unknown rdd probe {name!r}; the probes are {', '.join(PROBES)}"
    )
