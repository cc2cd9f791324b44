"""The honest reference analyst: self-contained, and honest on generated tasks."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from causal_gym.contracts.families import contract_of, contracts
from causal_gym.reference import analyst, answer, posterior
from causal_gym.scoring.reward import PROPER_INTERVAL_ALPHA
from tests.conftest import FAMILIES, V1, cached_task, reference_fit

ALLOWED_IMPORTS = {
    "__future__",
    "importlib",
    "io",
    "json",
    "re",
    "sys",
    "dataclasses",
    "pathlib",
    "math",
    "collections",
    "typing",
    "numpy",
    "pandas",
    "statsmodels",
    "scipy",
    "sklearn",
    "threadpoolctl",
}


#: The sandbox kit: copied into sandboxes side by side, importing one another by file.
#: Every module any family's sandbox kit ships (the design families' included).
KIT = tuple(sorted({name for spec in contracts() for name in spec.reference_kit}))


@pytest.mark.parametrize("name", KIT)
def test_imports_only_the_analyst_toolchain(name: str) -> None:
    """The toolchain, the standard library modules above, and the kit's own files
    (as `causal_gym.reference.X` inside the package or `X` beside it)."""
    tree = ast.parse((Path(analyst.__file__).parent / name).read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module or "")
    siblings = {kit.removesuffix(".py") for kit in KIT}
    outside = {
        m
        for m in modules
        if m.split(".")[0] not in ALLOWED_IMPORTS | siblings
        and m != "causal_gym.reference"
        and m.removeprefix("causal_gym.reference.") not in siblings
    }
    assert not outside, outside


@pytest.mark.parametrize("family", FAMILIES)
def test_runs_as_a_script_without_causal_gym(tmp_path: Path, family: str) -> None:
    task = cached_task(f"train:{family}:3")
    for name, data in task.public.files.items():
        (tmp_path / name).write_bytes(data)
    kit = tmp_path.parent / f"kit_{family}"
    kit.mkdir()
    for name in KIT:
        (kit / name).write_text((Path(analyst.__file__).parent / name).read_text())
    blocker = (
        f"import runpy, sys; sys.modules['causal_gym'] = None; sys.path.insert(0, {str(kit)!r}); "
        f"sys.argv = ['answer.py', {str(tmp_path)!r}]; "
        f"runpy.run_path({str(kit / 'answer.py')!r}, run_name='__main__')"
    )
    proc = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    submitted = json.loads(proc.stdout)
    spec = contract_of(family)
    intervals = spec.intervals(spec.submission_model.model_validate(submitted))
    assert tuple(intervals) == tuple(task.hidden.estimands)
    for name, (estimate, lower, upper) in intervals.items():
        truth = task.hidden.estimands[name]
        stored_estimate, stored_se = (
            reference_fit(task) if name == "ate" else (truth.reference_estimate, truth.reference_se)
        )
        width = 2 * analyst.Z * stored_se
        if family == "null_detect":  # the posterior under the disclosed prior
            expected = posterior.posterior_answer(
                posterior.NULL_DETECT_PRIOR, stored_estimate, stored_se, width
            )
            assert (estimate, lower, upper) == pytest.approx(
                (expected["estimate"], expected["ci_lower"], expected["ci_upper"]), rel=1e-12
            )
            continue
        assert estimate == pytest.approx(stored_estimate, rel=1e-12)
        assert upper - lower == pytest.approx(width)  # the honest 90% width
        if spec.multi_estimand:  # reward 3: the efficient estimator's, from the SCM
            # (obs_vs_rct's the pool of both files', well below a reference that
            # leans on the trial alone when the extract looks confounded)
            assert 0.4 * width < truth.reference_width < 1.1 * width
            assert truth.interval_alpha == PROPER_INTERVAL_ALPHA
        elif task.public.tier.value != "expert":  # the optimal valid OLS's, a bit narrower
            assert 0.7 * width < truth.reference_width < 1.02 * width
    if family == "adjustment":
        assert submitted["adjustment_set"] == list(task.hidden.pre_treatment)


def test_reference_is_unbiased_and_roughly_calibrated() -> None:
    """Three tests on 60 tasks; a calibrated, unbiased reference fails one of them with
    probability about 0.7% in all: mean z beyond 3/sqrt(n) (0.27%), coverage at most
    46/60 (0.20%) or all 60/60 (0.18%) under Binomial(60, 0.9), SD of z outside
    (0.6, 1.4) (chi-square, under 0.002%)."""
    z_scores, covered = [], 0
    for family in V1:  # the multi-estimand families are the estimand audit's
        for i in range(20):
            task = cached_task(f"train:{family}:{i}")
            estimate, se = reference_fit(task)
            z = (estimate - task.hidden.ate) / se
            z_scores.append(z)
            covered += abs(z) <= analyst.Z
    n = len(z_scores)
    assert abs(float(np.mean(z_scores))) < 3.0 / np.sqrt(n)  # no systematic bias
    assert 46 < covered < 60  # 90% nominal
    assert 0.6 < float(np.std(z_scores)) < 1.4  # SEs are the right size


def test_the_null_detect_reference_is_the_posterior_under_the_disclosed_prior() -> None:
    """An estimate at zero makes a null more likely than the prior says (the spike),
    one five SEs out makes an effect nearly sure; the answer is the posterior's
    median and its loss-optimal interval, never narrower than the fit's own 90%."""
    dictionary = analyst.DataDictionary(
        "null_detect", "t", "y", ("x",), (), {"x": "numeric"}, ("1",), ("0",)
    )

    def fit(estimate: float, se: float) -> analyst.ReferenceFit:
        lo, hi = estimate - analyst.Z * se, estimate + analyst.Z * se
        return analyst.ReferenceFit(estimate, se, lo, hi, 10, 10, 5, 5, True, 0, 0, 0)

    at_zero = answer.reference_submission(fit(0.0, 0.05), dictionary)
    assert at_zero["effect_probability"] < 13 / 20 and at_zero["estimate"] == 0.0
    assert at_zero["ci_upper"] - at_zero["ci_lower"] >= 2 * analyst.Z * 0.05 - 1e-9
    far = answer.reference_submission(fit(0.5, 0.1), dictionary)
    assert far["effect_probability"] > 0.99 and 0.45 < far["estimate"] < 0.5
    near = fit(0.12, 0.08)
    shown = answer.reference_submission(near, dictionary)
    assert shown == posterior.posterior_answer(posterior.NULL_DETECT_PRIOR, 0.12, 0.08, near.width)


def test_the_posterior_kit_copies_the_generators_declarations() -> None:
    """posterior.py runs in sandboxes without the package, so it writes the prior out;
    these are the declarations it copies (one fact, checked in one place)."""
    from causal_gym.families.null_detect.contract import (
        EFFECT_PRIOR,
        NULL_BLOCK_COUNTS,
        NULL_BLOCK_SIZE,
    )
    from causal_gym.plan.effects import HALF_WIDTH_HIGH, HALF_WIDTH_LOW
    from causal_gym.plan.task_plan import EFFECT_MAGNITUDE, EffectClass
    from causal_gym.scoring.reward import PROPER_INTERVAL_ALPHA
    from causal_gym.staging.readme import effect_size_line

    share = {name: count / NULL_BLOCK_SIZE for name, count in NULL_BLOCK_COUNTS.items()}
    assert posterior.NULL_DETECT_ATOM == share["structural_null"] == 1 - EFFECT_PRIOR
    assert (
        (share["hard_nonnull"], *EFFECT_MAGNITUDE[EffectClass.HARD_NONNULL]),
        (share["wide_nonnull"], *EFFECT_MAGNITUDE[EffectClass.WIDE_NONNULL]),
    ) == posterior.NULL_DETECT_PIECES
    assert ((1.0, *EFFECT_MAGNITUDE[EffectClass.STANDARD]),) == posterior.STANDARD_PIECES
    assert posterior.ALPHA == PROPER_INTERVAL_ALPHA
    from causal_gym.hooks import hooks_of

    readme = "...\n" + effect_size_line("score_after", hooks_of("ate")) + "\n..."
    assert posterior.disclosed_prior(readme, "ate") == posterior.hyperprior(
        HALF_WIDTH_LOW, HALF_WIDTH_HIGH
    )
    assert posterior.disclosed_prior("no such line", "ate") == posterior.STANDARD_PRIOR
    assert posterior.disclosed_prior(readme, "null_detect") == posterior.NULL_DETECT_PRIOR


def test_missing_readme_table_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# nothing here\n")
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    assert answer.main([str(tmp_path)]) == 1
