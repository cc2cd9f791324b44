"""The honest reference analyst: what a careful, unremarkable statistician would do.

This file is deliberately self-contained (standard library, numpy, pandas, scipy,
statsmodels only) because it is copied verbatim into agent sandboxes, which hold
the analyst toolchain but never the `causal_gym` package. It reads only the two
staged files and uses only what the README declares:

1. drop exact duplicate rows;
2. map every documented treatment spelling to 1/0;
3. drop rows with a blank in the treatment, outcome or any pre-treatment column;
4. drop gross outcome outliers (more than 6 robust SDs from the median, via MAD);
5. OLS of the outcome on the treatment and all declared pre-treatment covariates
   (categoricals as dummies), 90% normal interval from the classical SE.

When the README says relationships may be nonlinear (the expert tier), step 5 is
replaced by flexible.py's cross-fitted AIPW; the multi-estimand families answer from
estimands.py. Both build on this file, and answer.py picks among them:
`python answer.py DIR` prints the reference submission JSON for any family.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

LEVEL = 0.90
#: scipy.stats.norm.ppf(0.95), written out so importing this module does not load
#: scipy.stats (a test checks the two agree to the last bit).
Z = 1.6448536269514722
OUTLIER_CUTOFF = 6.0
MAD_TO_SD = 1.4826
#: The cheap effect-probability rule the probes keep (the reference's under reward
#: version 1): 0.25 when the 90% interval holds zero, else 0.95.
NULL_PROBABILITY_IF_ZERO_INSIDE = 0.25
NULL_PROBABILITY_IF_ZERO_OUTSIDE = 0.95

#: Any family's name (a registered family's README says which one it is; the kit
#: answers the ATE unless the family is one it knows more about).
_ANSWER = re.compile(r"^Answer type: `([a-z][a-z0-9_]{0,31})`", re.MULTILINE)
_COLUMN = re.compile(
    r"^\| `([^`]+)` \| (pre-treatment|post-treatment|treatment|outcome|mediator) \| "
    r"([a-z][^|]*?) \|",  # binary, categorical, coded, or a numeric type ("count ...")
    re.MULTILINE,
)
_CODE = re.compile(r"^\| `([^`]*)` \| (treated|control) \|\s*$", re.MULTILINE)
_MODIFIER = re.compile(r"^Effect modifier: `([^`]+)`", re.MULTILINE)
_NONLINEAR = re.compile(r"^- Functional form:", re.MULTILINE)


class ReadmeFormatError(ValueError):
    """Raised when README.md lacks the data-dictionary pieces this analyst needs."""


@dataclass(frozen=True)
class DataDictionary:
    family: str
    treatment: str
    outcome: str
    pre_treatment: tuple[str, ...]
    post_treatment: tuple[str, ...]
    types: dict[str, str]
    treated_codes: tuple[str, ...]
    control_codes: tuple[str, ...]
    #: cate's declared effect modifier and mediation's declared mediator.
    modifier: str | None = None
    mediator: str | None = None
    #: The README warns that relationships may be nonlinear (the expert tier).
    nonlinear: bool = False


@dataclass(frozen=True)
class ReferenceFit:
    estimate: float
    se: float
    ci_lower: float
    ci_upper: float
    n_staged: int
    n_used: int
    n_treated: int
    n_control: int
    full_rank: bool
    dropped_duplicates: int
    dropped_missing: int
    dropped_outliers: int

    @property
    def width(self) -> float:
        return self.ci_upper - self.ci_lower


def parse_readme(text: str) -> DataDictionary:
    answer = _ANSWER.search(text)
    rows = _COLUMN.findall(text)
    codes = _CODE.findall(text)
    if answer is None or not rows or not codes:
        raise ReadmeFormatError("README.md lacks the answer type, column table or treatment coding")
    by_timing: dict[str, list[str]] = {}
    for name, timing, _kind in rows:
        by_timing.setdefault(timing, []).append(name)
    if len(by_timing.get("treatment", [])) != 1 or len(by_timing.get("outcome", [])) != 1:
        raise ReadmeFormatError("README.md must declare exactly one treatment and one outcome")
    return DataDictionary(
        family=answer.group(1),
        treatment=by_timing["treatment"][0],
        outcome=by_timing["outcome"][0],
        pre_treatment=tuple(by_timing.get("pre-treatment", [])),
        post_treatment=tuple(by_timing.get("post-treatment", [])),
        types={name: kind for name, _timing, kind in rows},
        treated_codes=tuple(c for c, meaning in codes if meaning == "treated"),
        control_codes=tuple(c for c, meaning in codes if meaning == "control"),
        modifier=modifier.group(1) if (modifier := _MODIFIER.search(text)) else None,
        mediator=by_timing["mediator"][0] if by_timing.get("mediator") else None,
        nonlinear=_NONLINEAR.search(text) is not None,
    )


def read_staged(csv_bytes: bytes, dictionary: DataDictionary) -> pd.DataFrame:
    """Parse data.csv: only empty cells are missing; the treatment and categorical
    columns stay text (so `1`/`yes` codes survive), everything else is numeric."""
    text_columns = {dictionary.treatment} | {
        c for c, kind in dictionary.types.items() if kind == "categorical"
    }
    frame = pd.read_csv(
        io.BytesIO(csv_bytes),
        dtype={c: str for c in text_columns},
        keep_default_na=False,
        na_values=[""],
    )
    for col in frame.columns:
        if col not in text_columns and not pd.api.types.is_float_dtype(frame[col]):
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
    return frame


def outcome_scale(frame: pd.DataFrame, outcome: str) -> float:
    """The observable scale s: population SD of the staged outcome, blanks ignored."""
    return max(float(np.nanstd(frame[outcome].to_numpy(float), ddof=0)), 1e-6)


@dataclass(frozen=True)
class Cleaned:
    """The rows the reference keeps (steps 1-4 of the module docstring), with the
    treatment as `__t` in 1/0, and how many rows each step dropped."""

    frame: pd.DataFrame
    n_staged: int
    dropped_duplicates: int
    dropped_missing: int
    dropped_outliers: int


def clean_rows(staged: pd.DataFrame, d: DataDictionary, used: tuple[str, ...]) -> Cleaned:
    """Steps 1-4 on the outcome and the `used` columns."""
    n_staged = len(staged)
    deduped = staged.drop_duplicates()
    codes = {c: 1.0 for c in d.treated_codes} | {c: 0.0 for c in d.control_codes}
    frame = deduped[[d.outcome, *used]].assign(__t=deduped[d.treatment].map(codes).astype(float))
    complete = frame.dropna()
    y = complete[d.outcome].to_numpy(float)
    median = float(np.median(y)) if len(y) else 0.0
    spread = MAD_TO_SD * float(np.median(np.abs(y - median))) if len(y) else 0.0
    keep = np.abs(y - median) <= OUTLIER_CUTOFF * spread if spread > 0 else np.ones(len(y), bool)
    clean = complete[keep]
    return Cleaned(
        clean,
        n_staged,
        n_staged - len(deduped),
        len(deduped) - len(complete),
        len(complete) - len(clean),
    )


def covariate_columns(clean: pd.DataFrame, adjust: tuple[str, ...], d: DataDictionary) -> list:
    """Numeric covariates as they are, categoricals as dummies (first level dropped)."""
    categorical = [c for c in adjust if d.types[c] == "categorical"]
    columns = [clean[c].to_numpy(float) for c in adjust if c not in categorical]
    for col in categorical:
        values = clean[col].to_numpy(str)
        columns += [(values == level).astype(float) for level in sorted(set(values))[1:]]
    return columns


def is_full_rank(design: np.ndarray, n_rows: int) -> bool:
    return bool(n_rows > design.shape[1]) and int(np.linalg.matrix_rank(design)) == design.shape[1]


def fit_reference(
    staged: pd.DataFrame, dictionary: DataDictionary, covariates: tuple[str, ...] | None = None
) -> ReferenceFit:
    """The reference fit; `covariates` defaults to every declared pre-treatment column
    (other choices exist only so audits can show what worse choices cost)."""
    d = dictionary
    adjust = d.pre_treatment if covariates is None else covariates
    cleaned = clean_rows(staged, d, adjust)
    clean = cleaned.frame
    columns = [np.ones(len(clean)), clean["__t"].to_numpy(float)]
    columns += covariate_columns(clean, adjust, d)
    design = np.column_stack(columns)
    target = clean[d.outcome].to_numpy(float)
    n_treated = int(clean["__t"].sum())
    full_rank = is_full_rank(design, len(target))
    if full_rank:
        from statsmodels.regression.linear_model import OLS  # 1 s to import: only here

        fit = OLS(target, design).fit()
        estimate, se = float(fit.params[1]), float(fit.bse[1])
    else:
        estimate, se = float("nan"), float("nan")
    return ReferenceFit(
        estimate=estimate,
        se=se,
        ci_lower=estimate - Z * se,
        ci_upper=estimate + Z * se,
        n_staged=cleaned.n_staged,
        n_used=len(target),
        n_treated=n_treated,
        n_control=len(target) - n_treated,
        full_rank=full_rank,
        dropped_duplicates=cleaned.dropped_duplicates,
        dropped_missing=cleaned.dropped_missing,
        dropped_outliers=cleaned.dropped_outliers,
    )
