"""The did family: the truth is the model's exact ATT and the anchor's variance its
imputation estimator's (against replications), the kit's reference recovers it while
two-way fixed effects and the adopters' before-after difference do not, and a
generated task is staged, declared, deterministic and answerable (also from a sandbox
copy of the kit)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from causal_gym.families.did.draw import DYNAMIC, draw_model
from causal_gym.families.did.model import PanelModel
from causal_gym.make import generate_task
from causal_gym.plan.tiers import Tier
from causal_gym.reference import design_did as ref
from causal_gym.reference import design_did_fe as fe
from causal_gym.reference.designs import parse_design_readme, read_frame
from causal_gym.rng_keys.keys import DerivationKey

KEY = DerivationKey(bytes.fromhex("07" * 32), "test")
KIT = Path(__file__).resolve().parents[1] / "causal_gym" / "reference"


def _model(tier: Tier, rows: int, seed: int) -> PanelModel:
    plan = SimpleNamespace(tier=tier, staged_rows=rows)
    return draw_model(plan, 12, np.random.default_rng(seed))  # type: ignore[arg-type]


def _full_panel(model: PanelModel) -> tuple[fe.Cells, np.ndarray, np.ndarray]:
    """Every unit-period of the model: cells, treated, effect group."""
    unit = np.repeat(np.arange(model.n_units), model.n_periods).astype(np.int64)
    period = np.tile(np.arange(model.n_periods), model.n_units).astype(np.int64)
    treated = model.treated(unit, period)
    g = model.adoption[unit]
    group = np.where(treated, g * 1000 + period - g, -1).astype(np.int64)
    return fe.Cells(unit, period, model.n_units, model.n_periods), treated, group


def test_truth_and_anchor_variance_against_replications() -> None:
    """Over 400 panels of one small hard-tier model the imputation estimates average
    to the exact ATT (tolerance 4.5 SE) and their SD is the model's exact SD (within
    15%, about 4 SE of a 400-draw SD)."""
    model = _model(Tier.HARD, 600, seed=4)
    assert model.subtier == DYNAMIC
    cells, treated, group = _full_panel(model)
    omega, target = fe.imputation_weights(cells, treated)
    assert np.array_equal(target, treated)
    truth = model.att(cells.unit, cells.period)
    rng = np.random.default_rng(9)
    estimates = np.array([float(np.sum(omega * model.sample(rng).ravel())) for _ in range(400)])
    spread = float(estimates.std(ddof=1))
    assert abs(estimates.mean() - truth) < 4.5 * spread / math.sqrt(estimates.size)
    exact = model.estimator_sd(cells.unit, cells.period, omega)
    assert abs(spread / exact - 1.0) < 0.15
    # the weights are the estimator: they reproduce the fitted estimate on one panel
    y = model.sample(rng).ravel()
    assert fe.imputation(cells, treated, group, y).estimate == pytest.approx(np.sum(omega * y))


def test_reference_recovers_the_truth_and_the_probes_miss() -> None:
    """On a big staggered-dynamic panel the imputation interval covers the truth; TWFE
    and the adopters' after-minus-before are many SEs away."""
    model = _model(Tier.HARD, 40_000, seed=2)
    cells, treated, group = _full_panel(model)
    y = model.sample(np.random.default_rng(3)).ravel()
    truth = model.att(cells.unit, cells.period)
    fit = fe.imputation(cells, treated, group, y)
    assert abs(fit.estimate - truth) < 4.5 * fit.se
    twfe = fe.twfe(cells, treated, y)
    assert abs(twfe.estimate - truth) > 6 * twfe.se
    adopter = model.in_panel
    panel = ref.Panel(cells, treated, group, y, adopter)
    naive, se, _ = ref.post_minus_pre(panel)
    assert abs(naive - truth) > 6 * se


@pytest.fixture(scope="module")
def task():  # type: ignore[no-untyped-def]
    return generate_task("train:did:3", KEY)


def test_readme_has_the_design_facts(task) -> None:  # type: ignore[no-untyped-def]
    readme = parse_design_readme(task.public.files["README.md"].decode("utf-8"))
    for key in ("Family", "Estimand", "Treatment", "Outcome", "Missing values", "Unit id",
                "Unit id spellings", "Period", "Date column", "Date formats", "Adoption column",
                "Comparison group", "Never-adopter code"):  # fmt: skip
        assert readme[key]
    assert readme.family == "did"
    assert readme["Estimand"] == "att"
    text = task.public.files["README.md"].decode("utf-8")
    assert "Parallel trends" in text and "No anticipation" in text


def test_staged_csv_parses_and_its_mess_is_declared(task) -> None:  # type: ignore[no-untyped-def]
    files = task.public.files
    readme = parse_design_readme(files["README.md"].decode("utf-8"))
    lines = files["data.csv"].decode("utf-8").splitlines()[1:]
    assert len(lines) > len(set(lines))  # exact duplicates
    frame = read_frame(files["data.csv"], readme)
    assert len(frame) < len(lines)
    assert frame.isna().any().any()  # declared blanks read as missing
    ids = frame[readme.column("Unit id")].dropna()
    numbers = ids.map(ref.unit_number)
    assert numbers.notna().all()  # every spelling is a declared one
    assert ids.nunique() > numbers.nunique()  # and one unit has several
    season = 4 if readme["Period"] == "quarter" else 12
    dates = frame[readme.column("Date column")].dropna()
    periods = dates.map(lambda v: ref.period_index(v, season))
    assert periods.notna().all()  # both declared formats parse
    assert dates.nunique() > periods.nunique()  # and both are in use
    panel = ref.read_panel(frame, readme)
    assert panel.treated.any() and (~panel.treated).any()
    assert panel.cells.unit.size > 0.9 * numbers.nunique() * (panel.cells.n_periods - 1)
