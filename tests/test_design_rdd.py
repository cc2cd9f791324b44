"""The rdd family: the truth is the model's exact jump ratio, the kit's reference
recovers it while a straight line on each whole side does not, and a generated task
is staged, declared, deterministic and answerable (also from a sandbox copy of the
kit)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from causal_gym.families.rdd.anchor import anchor_width
from causal_gym.families.rdd.params import draw_model
from causal_gym.make import generate_task
from causal_gym.plan.tiers import Tier
from causal_gym.reference import design_rdd as ref
from causal_gym.reference import design_rdd_local as local
from causal_gym.reference.designs import parse_design_readme, read_frame
from causal_gym.rng_keys.keys import DerivationKey

KEY = DerivationKey(bytes.fromhex("07" * 32), "test")
KIT = Path(__file__).resolve().parents[1] / "causal_gym" / "reference"


def _model(tier: Tier, sharp: bool, seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    while True:
        model = draw_model(tier, rng)
        if model.sharp == sharp:
            return model


@pytest.mark.parametrize("sharp", [True, False])
def test_truth_is_the_jump_ratio_of_draws_at_the_cutoff(sharp: bool) -> None:
    """Rows drawn just either side of the cutoff: the outcome's jump over the
    treatment's is the model's `effect` (tolerance 4.5 delta-method SE)."""
    model = _model(Tier.HARD, sharp, seed=3)
    rng = np.random.default_rng(11)
    n = 200_000
    d1, y1 = model.draw(np.zeros(n), rng)
    d0, y0 = model.draw(np.full(n, -1e-12), rng)
    first = d1.mean() - d0.mean()
    ratio = (y1.mean() - y0.mean()) / first
    resid = np.var(y1 - ratio * d1) / n + np.var(y0 - ratio * d0) / n
    assert abs(ratio - model.truth) < 4.5 * math.sqrt(resid) / abs(first)


def test_reference_recovers_the_truth_and_the_wide_line_misses() -> None:
    """On a big clean sample of a curved model the robust bias-corrected fit covers the
    truth and a straight line on each whole side is many of its SEs away."""
    model = _model(Tier.MEDIUM, sharp=True, seed=1)
    rng = np.random.default_rng(5)
    u = model.density.sample(40_000, rng)
    _, y = model.draw(u, rng)
    data = ref.RddData(u, None, y)
    estimate, se = local.wald(local.local_jump(u, ref.bandwidth(data), 2), y, None)
    assert abs(estimate - model.truth) < 4.5 * se
    wide, _ = local.wald(local.local_jump(u, np.inf, 1, "uniform"), y, None)
    assert abs(wide - model.truth) > 8 * se
    assert anchor_width(model, 40_000).width > 0


@pytest.fixture(scope="module")
def task():  # type: ignore[no-untyped-def]
    return generate_task("train:rdd:2", KEY)


def test_readme_has_the_design_facts(task) -> None:  # type: ignore[no-untyped-def]
    readme = parse_design_readme(task.public.files["README.md"].decode("utf-8"))
    for key in ("Family", "Estimand", "Treatment", "Outcome", "Missing values",
                "Running variable", "Running variable format", "Cutoff", "Eligible side",
                "Treatment coding", "Design"):  # fmt: skip
        assert readme[key]
    assert readme.family == "rdd"
    assert readme["Estimand"] in ("effect_at_cutoff", "complier_effect_at_cutoff")


def test_staged_csv_parses_and_its_mess_is_declared(task) -> None:  # type: ignore[no-untyped-def]
    files = task.public.files
    readme = parse_design_readme(files["README.md"].decode("utf-8"))
    text = files["data.csv"].decode("utf-8")
    lines = text.splitlines()[1:]
    assert len(lines) > len(set(lines))  # exact duplicates
    frame = read_frame(files["data.csv"], readme)
    assert len(frame) < len(lines)
    assert frame.isna().any().any()  # declared blanks read as missing
    assert ref.running_values(frame, readme).notna().mean() > 0.85
    d = ref.treatment_values(frame[readme.column("Treatment")], readme)
    assert set(d.dropna().unique()) == {0.0, 1.0}
    assert d.notna().mean() > 0.85  # every spelling in use is declared
