"""The iv family's reference: the effect's posterior under the README's disclosed
effect range and the instrument's weak-instrument-robust likelihood, and the naive
analyses the audit probes (among them the frequentist Anderson-Rubin interval).

Self-contained (numpy, pandas, scipy and the kit's designs.py), copied into sandboxes
beside designs.py. The README's Design section names the treatment, outcome,
instrument and covariates, how blanks are written and how 0/1 columns are spelled;
rows with a blank in a used column are dropped (blanks are declared missing
completely at random), and the covariates (with an intercept) are partialled out of
the outcome, the treatment and the instrument first (Frisch-Waugh-Lovell).

With one instrument the Anderson-Rubin set {b : AR(b) <= c} is a quadratic
inequality in b. AR(b) tests that the instrument's coefficient in a regression of
y - b d on it is zero, with a heteroskedasticity-robust (HC1) variance, since effects
that vary make the residual's spread differ between the instrument's arms:
(a - b s)^2 <= c (Qyy - 2 b Qyd + b^2 Qdd), with a = z'y, s = z'd and Q the
z^2-weighted cross products of y and d net of z. It is a bounded interval when the
first stage is significant at the 10% level (its b^2 coefficient is positive); when
it is not, the set is two rays or the whole line, and the AR probe falls back to a
finite interval: the 2SLS estimate +- FALLBACK_SES robust standard errors.

Why a posterior: the reward is the proper interval score, whose expected value is
smallest at the 5% and 95% quantiles of the analyst's distribution for the effect.
With an instrument this weak (first-stage F 4-10) the AR set is valid but long, and
the narrow Wald interval of 2SLS, though it under-covers, scored better than it
(before the range was disclosed: CHANGELOG.md). Yet the README discloses the range the
truth is drawn from, uniformly, so the Bayes rule under that prior minimizes the expected loss over
the tasks: the reference is that rule. Its likelihood is the reduced form's: the
instrument's coefficients on y and d, (a, s), are normal with an HC1 covariance V
whatever the instrument's strength; integrating out the first stage (flat prior)
leaves L(b) proportional to (w'Vw)^(-1/2) exp(-AR(b)/2), w = (1, -b), the AR
statistic's own function of b. The posterior on a grid over the range gives the
median (the estimate) and the 5% and 95% quantiles (the interval).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

try:
    from causal_gym.reference import designs
except ImportError:  # copied into a sandbox next to designs.py
    import designs  # type: ignore[no-redef,import-not-found]

LEVEL = 0.90
Z90 = designs.Z90
#: The fallback interval's half-width, in robust standard errors, where the AR set is
#: unbounded.
FALLBACK_SES = 5.0 * Z90
GRID = designs.POSTERIOR_GRID
PROBES = ("ols", "reduced_form", "wald_2sls", "anderson_rubin")


@dataclass(frozen=True)
class IvData:
    """The complete rows as arrays: outcome y, treatment d, instrument z, covariates x."""

    y: np.ndarray
    d: np.ndarray
    z: np.ndarray
    x: np.ndarray

    @property
    def n(self) -> int:
        """Rows used."""
        return len(self.y)

    @property
    def dof(self) -> int:
        """Residual degrees of freedom of y ~ 1 + d + x."""
        return self.n - self.x.shape[1] - 2


def _codes(readme: designs.DesignReadme) -> dict[str, float]:
    """The Binary codes fact ('"yes", "1" mean 1; "no", "0" mean 0') as a lookup."""
    lookup: dict[str, float] = {}
    if "Binary codes" not in readme.facts:
        return lookup
    for part in readme["Binary codes"].split(";"):
        meaning = re.search(r"mean (-?\d+(?:\.\d+)?)", part)
        if meaning is not None:
            for token in re.findall(r'"([^"]*)"', part):
                lookup[token.strip().lower()] = float(meaning.group(1))
    return lookup


def _column(frame: pd.DataFrame, name: str, codes: dict[str, float]) -> pd.Series:
    if name not in frame.columns:
        raise designs.DesignReadmeError(f"data.csv has no column {name!r}")
    text = frame[name]
    coded = text.str.lower().map(codes)
    return coded.where(coded.notna(), designs.to_number(text)).astype(float)


def covariate_names(readme: designs.DesignReadme) -> list[str]:
    """The Covariates fact's columns (none when it says "none")."""
    return re.findall(r"`([^`]+)`", readme.facts.get("Covariates", ""))


def prepare(frame: pd.DataFrame, readme: designs.DesignReadme) -> IvData:
    """The complete rows of the columns the design uses, as numbers."""
    codes = _codes(readme)
    names = [readme.column(key) for key in (designs.OUTCOME, designs.TREATMENT, "Instrument")]
    names += covariate_names(readme)
    numbers = pd.concat([_column(frame, name, codes) for name in names], axis=1).dropna()
    values = numbers.to_numpy(dtype=float)
    return IvData(values[:, 0], values[:, 1], values[:, 2], values[:, 3:])


def _partial(data: IvData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """y, d and z net of an intercept and the covariates."""
    design = np.column_stack([np.ones(data.n), data.x])
    stacked = np.column_stack([data.y, data.d, data.z])
    coef, *_ = np.linalg.lstsq(design, stacked, rcond=None)
    residual = stacked - design @ coef
    return residual[:, 0], residual[:, 1], residual[:, 2]


def _ols(y: np.ndarray, regressor: np.ndarray, data: IvData) -> tuple[float, float]:
    """The coefficient of `regressor` in y ~ 1 + regressor + x, conventional SE."""
    design = np.column_stack([np.ones(data.n), regressor, data.x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    sigma2 = float(residual @ residual) / (data.n - design.shape[1])
    return float(coef[1]), math.sqrt(sigma2 * float(np.linalg.pinv(design.T @ design)[1, 1]))


def two_sls(data: IvData) -> tuple[float, float, float]:
    """(2SLS estimate, conventional SE, HC1-robust SE)."""
    y, d, z = _partial(data)
    a, s, zz = float(z @ y), float(z @ d), float(z @ z)
    if s == 0.0:
        raise ArithmeticError("the instrument does not move the treatment in these rows")
    beta = a / s
    e = y - beta * d
    conventional = math.sqrt(float(e @ e) / data.dof * zz) / abs(s)
    robust = math.sqrt(float((z * z) @ (e * e)) * data.n / data.dof) / abs(s)
    return beta, conventional, robust


def anderson_rubin(data: IvData, level: float = LEVEL) -> tuple[float, float] | None:
    """The robust AR confidence set when it is a bounded interval, else None."""
    y, d, z = _partial(data)
    a, s, zz = float(z @ y), float(z @ d), float(z @ z)
    ry, rd = y - (a / zz) * z, d - (s / zz) * z
    w = z * z
    qyy, qyd, qdd = float(w @ (ry * ry)), float(w @ (ry * rd)), float(w @ (rd * rd))
    dof = data.dof
    c = float(stats.f.ppf(level, 1, dof)) * data.n / dof
    quad, half, const = s * s - c * qdd, a * s - c * qyd, a * a - c * qyy
    disc = half * half - quad * const
    if quad <= 0.0 or disc < 0.0:
        return None
    root = math.sqrt(disc)
    return (half - root) / quad, (half + root) / quad


def posterior_quantiles(
    a: np.ndarray,
    s: np.ndarray,
    cov: tuple[float, float, float],
    bound: float,
    points: int = GRID,
) -> np.ndarray:
    """Rows of (median, 5% quantile, 95% quantile) of the effect for reduced-form
    coefficients a (on y) and s (on d), one pair per row, with covariance
    cov = (V_aa, V_as, V_ss), under a uniform prior on [-bound, bound]."""
    grid = np.linspace(-bound, bound, points)
    return designs.grid_quantiles(grid, log_likelihood(grid, a, s, cov))


def log_likelihood(
    grid: np.ndarray, a: np.ndarray, s: np.ndarray, cov: tuple[float, float, float]
) -> np.ndarray:
    """Rows (one per (a, s) pair) of the reduced form's log likelihood of each effect on
    `grid` (the module's docstring)."""
    v_aa, v_as, v_ss = cov
    spread = v_aa - 2.0 * grid * v_as + grid * grid * v_ss  # w'Vw, w = (1, -b)
    gap = np.asarray(a, dtype=float)[:, None] - grid[None, :] * np.asarray(s, dtype=float)[:, None]
    return -0.5 * gap * gap / spread - 0.5 * np.log(spread)


def reduced_form(data: IvData) -> tuple[float, float, tuple[float, float, float]]:
    """(a, s, HC1 covariance of (a, s)): the instrument's coefficients on the outcome and
    the treatment, covariates partialled out."""
    y, d, z = _partial(data)
    zz = float(z @ z)
    a, s = float(z @ y) / zz, float(z @ d) / zz
    ry, rd = y - a * z, d - s * z
    w = z * z * data.n / data.dof / zz**2  # HC1 weights of the coefficients' covariance
    return a, s, (float(w @ (ry * ry)), float(w @ (ry * rd)), float(w @ (rd * rd)))


def posterior(data: IvData, bound: float) -> tuple[float, float, float]:
    """(median, 5% quantile, 95% quantile) of the effect under a uniform prior on
    [-bound, bound] and the reduced form's likelihood (the module's docstring)."""
    a, s, cov = reduced_form(data)
    median, low, high = posterior_quantiles(np.array([a]), np.array([s]), cov, bound)[0]
    return float(median), float(low), float(high)


def first_stage_f(data: IvData) -> float:
    """The conventional first-stage F of the instrument (covariates partialled out)."""
    estimate, se = _ols(data.d, data.z, data)
    return (estimate / se) ** 2


def _fit(
    estimate: float, lower: float, upper: float, data: IvData, se: float | None
) -> designs.DesignFit:
    scale = float(np.std(data.y, ddof=1))
    return designs.DesignFit(estimate, se, lower, upper, data.n, scale)


def fit(frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """The posterior median with the 90% posterior interval under the disclosed range."""
    data = prepare(frame, readme)
    median, low, high = posterior(data, designs.effect_range(readme))
    return _fit(median, low, high, data, None)


def _anderson_rubin_fit(data: IvData) -> designs.DesignFit:
    """2SLS with the 90% Anderson-Rubin interval (a finite fallback where AR is
    unbounded): valid whatever the instrument's strength, and long when it is weak."""
    beta, _, robust = two_sls(data)
    interval = anderson_rubin(data)
    if interval is None:
        interval = (beta - FALLBACK_SES * robust, beta + FALLBACK_SES * robust)
    return _fit(beta, interval[0], interval[1], data, None)


def probe(name: str, frame: pd.DataFrame, readme: designs.DesignReadme) -> designs.DesignFit:
    """A naive analysis: "ols" (outcome on treatment and covariates, the design
    ignored), "reduced_form" (the instrument's coefficient in the outcome regression,
    reported as the effect), "wald_2sls" (2SLS +- z90 conventional SEs, which
    under-covers when the instrument is weak) or "anderson_rubin" (valid but, with a
    weak instrument, longer than the task's information needs)."""
    data = prepare(frame, readme)
    if name == "anderson_rubin":
        return _anderson_rubin_fit(data)
    if name == "ols":
        estimate, se = _ols(data.y, data.d, data)
    elif name == "reduced_form":
        estimate, se = _ols(data.y, data.z, data)
    elif name == "wald_2sls":
        estimate, se, _ = two_sls(data)
    else:
        raise designs.UnknownProbeError(f"unknown iv probe {name!r} (known: {', '.join(PROBES)})")
    return _fit(estimate, estimate - Z90 * se, estimate + Z90 * se, data, se)
