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
- null_detect: the posterior probability of a non-zero effect under the disclosed
  prior, with a normal alternative whose spread is three standard errors or a quarter
  of the outcome's SD, whichever is larger.
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


def effect_probability(fit: AipwFit, prior: float) -> float:
    """P(ATE != 0 | estimate) with a N(0, tau^2) alternative and the disclosed prior."""
    tau = max(3 * fit.se, 0.25 * fit.outcome_sd)

    def density(variance: float) -> float:
        return math.exp(-(fit.estimate**2) / (2 * variance)) / math.sqrt(variance)

    effect = prior * density(fit.se**2 + tau**2)
    return effect / (effect + (1 - prior) * density(fit.se**2))


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
        answer["effect_probability"] = effect_probability(fit, d.prior)
    return answer
