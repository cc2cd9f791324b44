"""The NSW reality check: its committed numbers recomputed from causaldata's own
tables, and its task staged like any other (the kit reads it) but served by no
stream or split."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from causal_gym.realdata.tables import package_root, source_names
from causal_gym.reality import nsw
from causal_gym.reference import answer, probes
from causal_gym.reference.flexible import fit_flexible
from scripts.reality_check import att_design, att_point

REPO = Path(__file__).resolve().parents[1]
COMMITTED = json.loads((REPO / "docs" / "real" / "reality_check.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return nsw.stage()


def test_the_experiment_is_recomputed_from_the_package_table() -> None:
    """Treated minus control 1978 earnings in the NSW sample, read straight from the
    package's file (not through the module), to the cent: 1,794 dollars."""
    table = pd.read_stata(package_root() / nsw.NSW_FILE[0], convert_categoricals=False)
    re78 = table["re78"].astype(np.float64).round(2)
    treated, control = re78[table["treat"] == 1], re78[table["treat"] == 0]
    estimate = treated.mean() - control.mean()
    se = np.sqrt(treated.var(ddof=1) / len(treated) + control.var(ddof=1) / len(control))
    committed = COMMITTED["experiment"]
    assert committed["estimate"] == pytest.approx(estimate, rel=1e-12)
    assert committed["se"] == pytest.approx(se, rel=1e-12)
    assert round(estimate) == 1794 and (len(treated), len(control)) == (185, 260)


def test_the_analysts_numbers_are_recomputed(files: dict[str, bytes]) -> None:
    """The kit's reference, the difference in means, the flexible reference and the
    weighting estimate of the effect on the treated, from the staged bytes."""
    rows = COMMITTED["analysts"]
    staged = probes.Staged.parse(files["data.csv"], files["README.md"].decode("utf-8"))
    recomputed = {
        "reference": answer.files_answer(files)["estimate"],
        "diff_in_means": probes.diff_in_means(staged)["estimate"],
        "flexible": fit_flexible(staged.frame, staged.dictionary).estimate,
        "att_weighting": att_point(*att_design(files), np.arange(COMMITTED["staged_rows"])),
    }
    for name, value in recomputed.items():
        assert rows[name]["estimate"] == pytest.approx(value, rel=1e-9), name
    exp = COMMITTED["experiment"]
    for row in rows.values():
        distance = (row["estimate"] - exp["estimate"]) / exp["se"]
        assert row["distance_in_experiment_se"] == pytest.approx(distance)
        assert row["covers_experiment"] == (row["ci_lower"] <= exp["estimate"] <= row["ci_upper"])
    # LaLonde's finding, in this file: no adjustment lands far below the experiment
    assert rows["diff_in_means"]["distance_in_experiment_se"] < -10


def test_the_check_is_staged_like_a_task_and_served_by_nothing(files: dict[str, bytes]) -> None:
    frame = pd.read_csv(io.BytesIO(files["data.csv"]))
    assert len(frame) == COMMITTED["staged_rows"] == 185 + 15_992
    assert frame["treat"].sum() == 185 and frame.isna().sum().sum() == 0
    readme = files["README.md"].decode("utf-8")
    assert "Answer type: `ate`" in readme and "effect on the treated" in readme
    assert "LaLonde (1986)" in readme and "Nothing is simulated" in readme
    assert nsw.stage() == files  # byte-identical
    assert not {"nsw", "cps"} & set(source_names())  # no stream draws from it
