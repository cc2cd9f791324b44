"""The honest reference analyst: self-contained, and honest on generated tasks."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from causal_gym.families.registry import family_spec
from causal_gym.reference import analyst
from tests.conftest import FAMILIES, cached_task

ALLOWED_IMPORTS = {
    "__future__",
    "io",
    "json",
    "re",
    "sys",
    "dataclasses",
    "pathlib",
    "numpy",
    "pandas",
    "statsmodels",
    "scipy",
}


def test_imports_only_the_analyst_toolchain() -> None:
    tree = ast.parse(Path(analyst.__file__).read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots.add((node.module or "").split(".")[0])
    assert roots <= ALLOWED_IMPORTS, roots - ALLOWED_IMPORTS


@pytest.mark.parametrize("family", FAMILIES)
def test_runs_as_a_script_without_causal_gym(tmp_path: Path, family: str) -> None:
    task = cached_task(f"train:{family}:3")
    for name, data in task.public.files.items():
        (tmp_path / name).write_bytes(data)
    copy = tmp_path.parent / f"analyst_copy_{family}.py"
    copy.write_text(Path(analyst.__file__).read_text())
    blocker = (
        "import runpy, sys; sys.modules['causal_gym'] = None; "
        f"sys.argv = ['analyst.py', {str(tmp_path)!r}]; "
        f"runpy.run_path({str(copy)!r}, run_name='__main__')"
    )
    proc = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    family_spec(family).submission_model.model_validate(answer)
    assert answer["estimate"] == pytest.approx(task.hidden.reference_estimate, rel=1e-12)
    assert answer["ci_upper"] - answer["ci_lower"] == pytest.approx(task.hidden.reference_width)
    if family == "adjustment":
        assert answer["adjustment_set"] == list(task.hidden.pre_treatment)


def test_reference_is_unbiased_and_roughly_calibrated() -> None:
    """Three tests on 60 tasks; a calibrated, unbiased reference fails one of them with
    probability about 0.7% in all: mean z beyond 3/sqrt(n) (0.27%), coverage at most
    46/60 (0.20%) or all 60/60 (0.18%) under Binomial(60, 0.9), SD of z outside
    (0.6, 1.4) (chi-square, under 0.002%)."""
    z_scores, covered = [], 0
    for family in FAMILIES:
        for i in range(20):
            h = cached_task(f"train:{family}:{i}").hidden
            z = (h.reference_estimate - h.ate) / h.reference_se
            z_scores.append(z)
            covered += abs(z) <= analyst.Z
    n = len(z_scores)
    assert abs(float(np.mean(z_scores))) < 3.0 / np.sqrt(n)  # no systematic bias
    assert 46 < covered < 60  # 90% nominal
    assert 0.6 < float(np.std(z_scores)) < 1.4  # SEs are the right size


def test_null_probability_rule() -> None:
    dictionary = analyst.DataDictionary(
        "null_detect", "t", "y", ("x",), (), {"x": "numeric"}, ("1",), ("0",)
    )

    def fit(lo: float, hi: float) -> analyst.ReferenceFit:
        return analyst.ReferenceFit((lo + hi) / 2, 1.0, lo, hi, 10, 10, 5, 5, True, 0, 0, 0)

    assert analyst.reference_submission(fit(-1, 1), dictionary)["effect_probability"] == 0.25
    assert analyst.reference_submission(fit(0.5, 1), dictionary)["effect_probability"] == 0.95


def test_missing_readme_table_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# nothing here\n")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    assert analyst.main([str(tmp_path)]) == 1
