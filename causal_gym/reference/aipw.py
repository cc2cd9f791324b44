"""A third-party analyst: augmented inverse-propensity weighting (doubly robust).

Written apart from `analyst.py` on purpose, sharing none of its parsing, cleaning or
fitting, so the audit can show that the reward does not merely reward agreeing with
the reference's own choices. It reads what an agent reads (README.md and data.csv):

- cleaning: rows whose treatment cell is not a documented code or whose used cells
  are blank are dropped; exact duplicate records are dropped; outcome values further
  than 7 interquartile-SDs (IQR / 1.349) from the median are taken as entry errors.
- models: a logistic propensity (Newton-Raphson, propensities clipped to
  [0.02, 0.98]) and one linear outcome model per arm, on every pre-treatment column
  (categoricals one-hot, first level dropped).
- estimate: the mean AIPW score; SE from its influence function; 90% normal interval.
- null_detect: the posterior under the family's prior, on a grid of its own: the
  README's share of non-zero effects, and from the public generator the sizes of
  those (7 in 13 hard, |ATE| in [0.05, 0.25]; 6 in 13 wide, in [0.30, 1.50]). The
  answer is the posterior median, the 5%-95% posterior interval (widened, with equal
  mass beyond each end, to the AIPW interval's width where narrower) and P(ATE != 0):
  the loss-optimal answer, as the reference's is, computed independently of it.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass

import numpy as np

Z90 = 1.6448536269514722
CLIP = (0.02, 0.98)
IQR_TO_SD = 1.349
ERROR_DISTANCE = 7.0

_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z-]+) \| ([^|]+?) \|", re.MULTILINE)
_CODE = re.compile(r"^\| `([^`]*)` \| (treated|control) \|$", re.MULTILINE)
_FAMILY = re.compile(r"^Answer type: `(ate|adjustment|null_detect)`", re.MULTILINE)
_PRIOR = re.compile(r"prior probability (\d+)/(\d+)")


class AipwError(ValueError):
    """Raised while reading a task the third-party analyst cannot make sense of."""


@dataclass(frozen=True)
class AipwFit:
    estimate: float
    se: float
    n_used: int
    outcome_sd: float


@dataclass(frozen=True)
class Dictionary:
    family: str
    treatment: str
    outcome: str
    covariates: tuple[tuple[str, str], ...]  # (name, documented type), pre-treatment
    codes: dict[str, str]
    prior: float | None


def read_dictionary(readme: str) -> Dictionary:
    rows = _ROW.findall(readme)
    by_timing = {timing: name for name, timing, _ in rows}
    family = _FAMILY.search(readme)
    codes = dict(_CODE.findall(readme))
    if family is None or "treatment" not in by_timing or "outcome" not in by_timing or not codes:
        raise AipwError("the README names no answer type, treatment, outcome or codes")
    prior = _PRIOR.search(readme)
    return Dictionary(
        family=family.group(1),
        treatment=by_timing["treatment"],
        outcome=by_timing["outcome"],
        covariates=tuple((n, k) for n, t, k in rows if t == "pre-treatment"),
        codes=codes,
        prior=int(prior.group(1)) / int(prior.group(2)) if prior else None,
    )


def _clean(data: bytes, d: Dictionary) -> list[dict[str, str]]:
    used = [d.treatment, d.outcome, *(n for n, _ in d.covariates)]
    seen: set[tuple[str, ...]] = set()
    rows = []
    for row in csv.DictReader(io.StringIO(data.decode("utf-8"))):
        record = tuple(row.values())
        if record in seen:
            continue
        seen.add(record)
        if row[d.treatment] in d.codes and all(row[c] != "" for c in used):
            rows.append(row)
    y = np.array([float(r[d.outcome]) for r in rows])
    q1, median, q3 = np.percentile(y, [25, 50, 75])
    limit = ERROR_DISTANCE * (q3 - q1) / IQR_TO_SD
    return [r for r, v in zip(rows, y, strict=True) if abs(v - median) <= limit]


def _design(rows: list[dict[str, str]], columns: tuple[tuple[str, str], ...]) -> np.ndarray:
    parts = [np.ones(len(rows))]
    for name, kind in columns:
        cells = [r[name] for r in rows]
        if kind == "categorical":
            for level in sorted(set(cells))[1:]:
                parts.append(np.array([c == level for c in cells], dtype=float))
        else:
            parts.append(np.array([float(c) for c in cells]))
    return np.column_stack(parts)


def _propensity(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Logistic regression by Newton-Raphson (a tiny ridge keeps separable data finite)."""
    beta = np.zeros(x.shape[1])
    ridge = 1e-6 * np.eye(x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge
        step = np.linalg.solve(hessian, x.T @ (t - p))
        beta += step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return np.clip(1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30))), *CLIP)


def _arm_model(x: np.ndarray, y: np.ndarray, arm: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x[arm], y[arm], rcond=None)
    return np.asarray(x @ coef)


def aipw_fit(d: Dictionary, data: bytes) -> AipwFit:
    rows = _clean(data, d)
    y = np.array([float(r[d.outcome]) for r in rows])
    t = np.array([d.codes[r[d.treatment]] == "treated" for r in rows])
    x = _design(rows, d.covariates)
    e = _propensity(x, t.astype(float))
    mu1, mu0 = _arm_model(x, y, t), _arm_model(x, y, ~t)
    score = mu1 - mu0 + t * (y - mu1) / e - (~t) * (y - mu0) / (1 - e)
    se = float(score.std(ddof=1) / math.sqrt(len(score)))
    return AipwFit(float(score.mean()), se, len(score), float(np.std(y)))


#: The non-zero effect sizes of null_detect, from the public generator: (share of the
#: non-zero effects, smallest |ATE|, largest |ATE|).
NONZERO_SIZES = ((7 / 13, 0.05, 0.25), (6 / 13, 0.30, 1.50))
_GRID = np.linspace(-1.5, 1.5, 6001)


def posterior_answer(fit: AipwFit, prior: float) -> dict[str, float]:
    """The null_detect answer under the disclosed prior, on a grid plus the atom."""
    magnitude = np.abs(_GRID)
    slab = np.zeros_like(_GRID)
    for share, low, high in NONZERO_SIZES:
        inside = (magnitude >= low) & (magnitude <= high)
        slab += share * inside / inside.sum()
    like = np.exp(-0.5 * ((fit.estimate - _GRID) / fit.se) ** 2)
    atom = (1.0 - prior) * math.exp(-0.5 * (fit.estimate / fit.se) ** 2)
    mass = prior * slab * like
    total = mass.sum() + atom
    mass, atom = mass / total, atom / total
    below = np.cumsum(mass) + atom * (_GRID >= 0.0)  # P(effect <= grid point)

    def quantile(q: float) -> float:
        return float(_GRID[min(int(np.searchsorted(below, q)), len(_GRID) - 1)])

    lower, upper = quantile(0.05), quantile(0.95)
    width = 2.0 * Z90 * fit.se
    if upper - lower < width:  # equal mass beyond each end of a width-`width` interval
        ends = np.interp(_GRID + width, _GRID, below, right=1.0)
        balance = below - (1.0 - ends)
        lower = float(_GRID[min(int(np.searchsorted(balance, 0.0)), len(_GRID) - 1)])
        upper = lower + width
    return {
        "estimate": quantile(0.5),
        "ci_lower": lower,
        "ci_upper": upper,
        "effect_probability": float(1.0 - atom),
    }


def aipw_submission(readme: str, data: bytes) -> dict[str, object]:
    d = read_dictionary(readme)
    fit = aipw_fit(d, data)
    answer: dict[str, object] = {
        "estimate": fit.estimate,
        "ci_lower": fit.estimate - Z90 * fit.se,
        "ci_upper": fit.estimate + Z90 * fit.se,
    }
    if d.family == "adjustment":
        answer["adjustment_set"] = [name for name, _ in d.covariates]
    if d.family == "null_detect":
        if d.prior is None:
            raise AipwError("the README discloses no prior for a non-zero effect")
        answer.update(posterior_answer(fit, d.prior))
    return answer
