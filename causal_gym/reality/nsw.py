"""The reality check: LaLonde's question asked as a task, and its experimental answer.

The National Supported Work demonstration (NSW) assigned its job training at random;
among the 445 men of the Dehejia-Wahba sample, the treated earned 1,794 dollars more
in 1978 than the randomized controls: an effect on the treated known from an
experiment, not from a model. LaLonde (1986) asked whether observational methods
recover it when the controls are replaced by a survey sample (the CPS), and Dehejia
and Wahba (1999) answered again with propensity scores. `stage()` writes that
question as a task like any other: the 185 NSW treated with the 15,992 CPS men in one
data.csv, a README with the real dictionary, the answer schema of `ate`. It is a
published, famous dataset, so it is a check of the analysts, never a benchmark of
models, and no stream or split serves it (its data is not among the real tier's
sources either). The data are real end to end, so nothing is simulated and no mess
is added: every cell is the study's.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass

import numpy as np

from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.hooks import hooks_of
from causal_gym.realdata.tables import source_bytes
from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import Kind, Timing
from causal_gym.staging.mess import TreatmentCoding
from causal_gym.staging.naming import ColumnSpec, Theme
from causal_gym.staging.readme import ReadmeFacts, render_prompt, render_readme
from causal_gym.staging.source_note import SourceNote
from causal_gym.task_id import Family

NSW_FILE = ("nsw_mixtape/nsw_mixtape.dta",
            "e4a64e4436c2c178f47d6c82a371d20f1596b82b44862ce24bf13c71ac797339")  # fmt: skip
CPS_FILE = ("cps_mixtape/cps_mixtape.dta",
            "1345a61d4f4f6ab84abd475906a86671b969b278a8ef0e96d8e8ba8e3c3556e1")  # fmt: skip
TREATMENT, OUTCOME = "treat", "re78"
#: (column, description, unit, value kind, low, high, decimals), in file order.
COVARIATES = (
    ("age", "Age in 1975", "years", ValueKind.COUNT, None, None, 0),
    ("educ", "Years of schooling", "years", ValueKind.COUNT, None, None, 0),
    ("black", "Black: 1 = yes, 0 = no", "", None, None, None, 0),
    ("hisp", "Hispanic: 1 = yes, 0 = no", "", None, None, None, 0),
    ("marr", "Married: 1 = yes, 0 = no", "", None, None, None, 0),
    ("nodegree", "No high-school degree: 1 = yes, 0 = no", "", None, None, None, 0),
    ("re74", "Real earnings in 1974", "1982 dollars", ValueKind.POSITIVE, None, None, 2),
    ("re75", "Real earnings in 1975", "1982 dollars", ValueKind.POSITIVE, None, None, 2),
)
THEME = Theme(
    key="real:nsw-cps",
    unit="man",
    population=(
        "men who joined the National Supported Work job-training program in 1976-77 "
        "(treated) and men of the 1976 Current Population Survey (not treated)"
    ),
    setting="the NSW demonstration and the CPS (LaLonde 1986; Dehejia and Wahba 1999)",
    treatment=(), outcome=(), continuous=(), binary=(), categorical=(), post=(),
)  # fmt: skip
SOURCE = SourceNote(
    "the NSW treated men of the Dehejia-Wahba sample and the CPS-1 comparison sample",
    "LaLonde (1986), Dehejia and Wahba (1999); causaldata 0.1.5 (MIT), nsw_mixtape and cps_mixtape",
    185 + 15_992,
    semi_synthetic=False,
)


@dataclass(frozen=True)
class Experiment:
    """The randomized answer: treated minus control mean of 1978 earnings in the NSW
    sample, with its unpooled (Welch) standard error."""

    estimate: float
    se: float
    n_treated: int
    n_control: int

    @property
    def width90(self) -> float:
        """The experiment's own 90% interval width."""
        return 2.0 * 1.6448536269514722 * self.se


def _frame(file: tuple[str, str]):  # type: ignore[no-untyped-def]
    import pandas as pd

    frame = pd.read_stata(io.BytesIO(source_bytes(*file)), convert_categoricals=False)
    for column in ("re74", "re75", "re78"):  # float32 dollars: to the cent, as staged
        frame[column] = frame[column].astype(np.float64).round(2)
    return frame


def experiment() -> Experiment:
    """The NSW experiment's answer, from the pinned table (to the cent, as staged)."""
    nsw = _frame(NSW_FILE)
    treated = nsw.loc[nsw[TREATMENT] == 1, OUTCOME].to_numpy(np.float64)
    control = nsw.loc[nsw[TREATMENT] == 0, OUTCOME].to_numpy(np.float64)
    se = math.sqrt(treated.var(ddof=1) / len(treated) + control.var(ddof=1) / len(control))
    return Experiment(float(treated.mean() - control.mean()), se, len(treated), len(control))


def _fixed_stream(label: str) -> np.random.Generator:
    """A named stream for the one fixed file (no key: the data are published)."""
    seed = int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "big")
    return np.random.Generator(np.random.PCG64(seed))


def _columns() -> tuple[ColumnSpec, ...]:
    treat = ColumnSpec(
        TREATMENT, TREATMENT, Timing.TREATMENT, Kind.BINARY,
        "Whether the man was in the NSW job-training program",
    )  # fmt: skip
    outcome = ColumnSpec(
        OUTCOME, OUTCOME, Timing.OUTCOME, Kind.CONTINUOUS, "Real earnings in 1978",
        unit="1982 dollars", value_kind=ValueKind.POSITIVE, low=0.0, decimals=2,
    )  # fmt: skip
    pre = [
        ColumnSpec(
            name,
            name,
            Timing.PRE,
            Kind.BINARY if kind is None else Kind.CONTINUOUS,
            text,
            unit=unit,
            value_kind=kind,
            low=0.0 if kind else None,
            decimals=decimals,
            real=True,
        )
        for name, text, unit, kind, _low, _high, decimals in COVARIATES
    ]
    return (treat, outcome, *sorted(pre, key=lambda c: c.name))


class _AttWording:
    """`ate`'s wording with the question the experiment answers: the effect on the
    treated (the NSW men), not on the whole file."""

    def __init__(self) -> None:
        self._ate = hooks_of("ate")
        self.effect_size_subject = self._ate.effect_size_subject
        self.effect_size_detail = self._ate.effect_size_detail
        self.estimands = ("att",)

    def effect_size_note(self, declared: object) -> str:
        return self.effect_size_detail

    def readme_lines(self, declared: object = None) -> list[str]:
        return ["Report a 90% interval for the effect on the treated in the `estimate`, "
                "`ci_lower` and `ci_upper` fields."]  # fmt: skip

    def question(self, treatment: str, outcome: str, unit: str) -> str:
        return (
            f"Estimate the average effect of `{treatment}` on `{outcome}` among the men "
            f"who were in the program (the effect on the treated, ATT): their mean "
            f"`{outcome}` minus what it would have been had they not joined, in dollars."
        )

    def context_lines(self, declared: object) -> list[str]:
        return []

    def assumption_lines(self) -> None:
        return None


def _facts(n_rows: int) -> ReadmeFacts:
    return ReadmeFacts(
        Family("ate"),
        _AttWording(),
        THEME,
        n_rows,
        _columns(),
        TreatmentCoding(treated=("1",), control=("0",)),
        submission_json_schema("ate"),
        source=SOURCE,
    )


def prompt() -> str:
    """The prompt an agent gets with the staged files."""
    return render_prompt(_facts(SOURCE.table_rows), _fixed_stream("causal-gym:nsw-prompt"))


def stage() -> dict[str, bytes]:
    """data.csv and README.md of the reality check (byte-identical on every machine)."""
    import pandas as pd

    nsw, cps = _frame(NSW_FILE), _frame(CPS_FILE)
    names = [TREATMENT, *(c[0] for c in COVARIATES), OUTCOME]
    rows = pd.concat([nsw.loc[nsw[TREATMENT] == 1, names], cps[names]], ignore_index=True)
    order = _fixed_stream("causal-gym:nsw-reality-check:rows").permutation(len(rows))
    rows = rows.iloc[order].reset_index(drop=True)
    text = io.StringIO()
    decimals = {c[0]: c[6] for c in COVARIATES} | {TREATMENT: 0, OUTCOME: 2}
    text.write(",".join(names) + "\n")
    for record in rows.itertuples(index=False):
        cells = [f"{float(v):.{decimals[n]}f}" for n, v in zip(names, record, strict=True)]
        text.write(",".join(cells) + "\n")
    readme = render_readme(_facts(len(rows)), _fixed_stream("causal-gym:nsw-reality-check:readme"))
    return {"data.csv": text.getvalue().encode("ascii"), "README.md": readme.encode("utf-8")}
