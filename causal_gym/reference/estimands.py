"""The honest reference for the multi-estimand families (cate, mediation, obs_vs_rct).

Self-contained like analyst.py, whose cleaning it reuses (it is copied into
sandboxes beside it). Every estimate is an OLS coefficient or a smooth function of
OLS coefficients, with classical standard errors:

- cate: one regression with the treatment interacted with the modifier's levels
  (and every other declared pre-treatment column adjusted for); a level's effect is
  the treatment coefficient plus that level's interaction.
- mediation: the outcome on treatment, mediator and covariates (direct effect,
  mediator->outcome slope) and the mediator on treatment and covariates
  (treatment->mediator slope); the indirect effect is the product of the slopes,
  its standard error by the delta method, which is deterministic.
- obs_vs_rct: the adjusted estimate from each file and z for their difference.
  Where the README discloses the bias's size (generator 3: uniform between 0.5 and 4
  combined SEs, either sign), the answer is calibrated under that pre-test: the bias
  probability is the posterior P(confounded | z) under the disclosed prior and size,
  and the ATE's interval the 5% and 95% quantiles of the posterior mixture, the
  inverse-variance pool if the extract is clean and the trial alone if it is not,
  weighted by that probability. A generator-2 README (frozen eval-v2: a bias of at
  least 4 SEs) keeps the plain rule: the pool if the two agree (|z| <= 2.576), else
  the trial alone.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

try:  # inside the package
    from causal_gym.reference import analyst
except ImportError:  # copied into a sandbox next to analyst.py
    import analyst  # type: ignore[no-redef]

#: |z| of the extract-minus-trial difference up to which the two are pooled.
AGREE_Z = 2.576
BIAS_PROBABILITY_IF_AGREE = 0.03
BIAS_PROBABILITY_IF_DISAGREE = 0.97
#: The disclosed prior that an extract is confounded (families/obs_vs_rct.py
#: BIAS_PRIOR; a test checks the copy).
CONFOUNDED_PRIOR = 0.5
_SPREAD = re.compile(
    r"the bias of data\.csv's adjusted estimate was drawn uniformly between ([0-9.]+) and "
    r"([0-9.]+) combined standard errors"
)


@dataclass(frozen=True)
class EstimandFit:
    """`se` is the interval's width over 2 z_0.95; `bounds`, when an interval is not
    symmetric about its estimate (obs_vs_rct's posterior mixture)."""

    estimate: float
    se: float
    #: The smallest arm behind the estimate (clean rows), for the solvability check.
    min_arm_rows: int
    full_rank: bool
    bounds: tuple[float, float] | None = None
    #: The clean rows of the file the fit used (the reward anchor's n).
    n_used: int = 0

    def interval(self) -> dict[str, float]:
        if self.bounds is not None:
            lower, upper = self.bounds
        else:
            half = analyst.Z * self.se
            lower, upper = self.estimate - half, self.estimate + half
        return {"estimate": self.estimate, "ci_lower": lower, "ci_upper": upper}


def _ols(design: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    if not analyst.is_full_rank(design, len(target)):
        return None
    from statsmodels.regression.linear_model import OLS

    fit = OLS(target, design).fit()
    return np.asarray(fit.params), np.asarray(fit.cov_params())


def _arms(treated: np.ndarray) -> int:
    return int(min(treated.sum(), len(treated) - treated.sum()))


def _failed(arms: int) -> EstimandFit:
    return EstimandFit(float("nan"), float("nan"), arms, False)


def fit_cate(staged: object, d: analyst.DataDictionary) -> dict[str, EstimandFit]:
    """Each level's effect, keyed by the level as data.csv writes it."""
    assert d.modifier is not None, "a cate README declares its effect modifier"
    adjust = tuple(c for c in d.pre_treatment if c != d.modifier)
    clean = analyst.clean_rows(staged, d, (*adjust, d.modifier)).frame
    t = clean["__t"].to_numpy(float)
    codes = clean[d.modifier].to_numpy(str)
    levels = [str(level) for level in sorted(set(codes))]
    dummies = [(codes == level).astype(float) for level in levels[1:]]
    columns = [np.ones(len(clean)), t, *analyst.covariate_columns(clean, adjust, d), *dummies]
    columns += [t * dummy for dummy in dummies]
    fit = _ols(np.column_stack(columns), clean[d.outcome].to_numpy(float))
    first_interaction = len(columns) - len(dummies)
    fits: dict[str, EstimandFit] = {}
    rows = len(clean)
    for k, level in enumerate(levels):
        arms = _arms(t[codes == level])
        if fit is None:
            fits[level] = _failed(arms)
            continue
        params, cov = fit
        if k == 0:
            fits[level] = EstimandFit(
                float(params[1]), math.sqrt(cov[1, 1]), arms, True, None, rows
            )
            continue
        j = first_interaction + k - 1
        variance = cov[1, 1] + cov[j, j] + 2.0 * cov[1, j]
        estimate = float(params[1] + params[j])
        fits[level] = EstimandFit(estimate, math.sqrt(variance), arms, True, None, rows)
    return fits


def fit_mediation(staged: object, d: analyst.DataDictionary) -> dict[str, EstimandFit]:
    """Direct, indirect and total effects through the declared mediator."""
    assert d.mediator is not None, "a mediation README declares its mediator"
    clean = analyst.clean_rows(staged, d, (*d.pre_treatment, d.mediator)).frame
    t = clean["__t"].to_numpy(float)
    m = clean[d.mediator].to_numpy(float)
    covariates = analyst.covariate_columns(clean, d.pre_treatment, d)
    ones = np.ones(len(clean))
    outcome = _ols(np.column_stack([ones, t, m, *covariates]), clean[d.outcome].to_numpy(float))
    mediator = _ols(np.column_stack([ones, t, *covariates]), m)
    arms = _arms(t)
    if outcome is None or mediator is None:
        return {name: _failed(arms) for name in ("direct", "indirect", "total")}
    (b, vb), (g, vg) = outcome, mediator
    direct, slope, a, var_a = float(b[1]), float(b[2]), float(g[1]), float(vg[1, 1])
    var_indirect = a * a * vb[2, 2] + slope * slope * var_a
    var_total = vb[1, 1] + a * a * vb[2, 2] + 2.0 * a * vb[1, 2] + slope * slope * var_a
    rows = len(clean)
    return {
        "direct": EstimandFit(direct, math.sqrt(vb[1, 1]), arms, True, None, rows),
        "indirect": EstimandFit(a * slope, math.sqrt(var_indirect), arms, True, None, rows),
        "total": EstimandFit(direct + a * slope, math.sqrt(var_total), arms, True, None, rows),
    }


@dataclass(frozen=True)
class ObsRctFit:
    observational: EstimandFit
    trial: EstimandFit
    z: float
    pooled: bool
    combined: EstimandFit
    bias_probability: float


def _adjusted(staged: object, d: analyst.DataDictionary) -> EstimandFit:
    fit = analyst.fit_reference(staged, d)
    arms = min(fit.n_treated, fit.n_control)
    return EstimandFit(fit.estimate, fit.se, arms, fit.full_rank, None, fit.n_used)


def residual_sd(staged: object, d: analyst.DataDictionary) -> float:
    """The SD of the adjusted OLS residual on a staged file (the audit's check that an
    unobserved confounder leaves the outcome's spread alone)."""
    cleaned = analyst.clean_rows(staged, d, d.pre_treatment).frame
    columns = [np.ones(len(cleaned)), cleaned["__t"].to_numpy(float)]
    design = np.column_stack(columns + analyst.covariate_columns(cleaned, d.pre_treatment, d))
    target = cleaned[d.outcome].to_numpy(float)
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    return float(np.std(target - design @ coef))


def disclosed_spread(readme: str) -> tuple[float, float] | None:
    """The bias's size range a generator-3 README discloses (None: generator 2)."""
    found = _SPREAD.search(readme)
    return (float(found.group(1)), float(found.group(2))) if found else None


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def confounded_probability(z: float, spread: tuple[float, float]) -> float:
    """P(confounded | z): z ~ N(0, 1) for a clean extract, N(+-rho, 1) with rho uniform
    on `spread` for a confounded one, the disclosed prior between them."""
    low, high = spread
    clean = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    biased = (_phi(z + high) - _phi(z + low) + _phi(z - low) - _phi(z - high)) / (
        2.0 * (high - low)
    )
    p = CONFOUNDED_PRIOR
    total = p * biased + (1.0 - p) * clean
    return p * biased / total if total > 0 else 1.0


def _mixture_quantile(q: float, parts: list[tuple[float, float, float]]) -> float:
    """The q-quantile of a mixture of normals given as (weight, mean, sd)."""
    low = min(m - 12 * s for _, m, s in parts)
    high = max(m + 12 * s for _, m, s in parts)
    for _ in range(100):
        mid = 0.5 * (low + high)
        if sum(w * _phi((mid - m) / s) for w, m, s in parts) >= q:
            high = mid
        else:
            low = mid
    return 0.5 * (low + high)


def _pool(o: EstimandFit, r: EstimandFit) -> EstimandFit:
    wo, wr = 1.0 / o.se**2, 1.0 / r.se**2
    estimate = (wo * o.estimate + wr * r.estimate) / (wo + wr)
    return EstimandFit(estimate, 1.0 / math.sqrt(wo + wr), r.min_arm_rows, True)


def fit_obs_vs_rct(
    obs: object,
    trial: object,
    d: analyst.DataDictionary,
    spread: tuple[float, float] | None = None,
) -> ObsRctFit:
    o, r = _adjusted(obs, d), _adjusted(trial, d)
    z = (o.estimate - r.estimate) / math.hypot(o.se, r.se)
    if spread is None:  # generator 2's plain rule
        pooled = abs(z) <= AGREE_Z
        combined = _pool(o, r) if pooled else r
        probability = BIAS_PROBABILITY_IF_AGREE if pooled else BIAS_PROBABILITY_IF_DISAGREE
        return ObsRctFit(o, r, z, pooled, combined, probability)
    probability = confounded_probability(z, spread)
    pool = _pool(o, r)
    parts = [(1.0 - probability, pool.estimate, pool.se), (probability, r.estimate, r.se)]
    lower, upper = _mixture_quantile(0.05, parts), _mixture_quantile(0.95, parts)
    median = _mixture_quantile(0.5, parts)
    combined = EstimandFit(
        median, (upper - lower) / (2.0 * analyst.Z), r.min_arm_rows, True, (lower, upper)
    )
    return ObsRctFit(o, r, z, probability < 0.5, combined, probability)


@dataclass(frozen=True)
class Analysis:
    """A multi-estimand task's staged files, parsed, with the reference fits."""

    dictionary: analyst.DataDictionary
    frame: object  # pandas.DataFrame of data.csv
    trial: object | None  # pandas.DataFrame of trial.csv (obs_vs_rct)
    scale: float
    fits: dict[str, EstimandFit]
    obs_rct: ObsRctFit | None
    #: The README's text (what a prior-aware probe reads its disclosures from).
    readme: str = ""

    @classmethod
    def parse(cls, files: dict[str, bytes]) -> Analysis:
        readme = files["README.md"].decode("utf-8")
        d = analyst.parse_readme(readme)
        frame = analyst.read_staged(files["data.csv"], d)
        scale = analyst.outcome_scale(frame, d.outcome)
        if d.family == "cate":
            return cls(d, frame, None, scale, fit_cate(frame, d), None, readme)
        if d.family == "mediation":
            return cls(d, frame, None, scale, fit_mediation(frame, d), None, readme)
        if d.family != "obs_vs_rct":
            raise analyst.ReadmeFormatError(f"{d.family} is not a multi-estimand family")
        trial = analyst.read_staged(files["trial.csv"], d)
        both = fit_obs_vs_rct(frame, trial, d, disclosed_spread(readme))
        return cls(d, frame, trial, scale, {"ate": both.combined}, both, readme)

    def answer(self) -> dict[str, object]:
        """The reference submission."""
        family = self.dictionary.family
        if family == "cate":
            return {"effects": {level: fit.interval() for level, fit in self.fits.items()}}
        if family == "mediation":
            return {name: fit.interval() for name, fit in self.fits.items()}
        assert self.obs_rct is not None
        return {**self.fits["ate"].interval(), "bias_probability": self.obs_rct.bias_probability}
