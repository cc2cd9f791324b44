"""iv's generator-aware probe with the nuisances in: the reference's posterior times
what the public generator says about the confounding.

The reference (reference/design_iv.py) uses the reduced form and the disclosed effect
range and nothing else, which is the Bayes rule only if nothing else the generator
draws tells about the effect. The confounder's loadings are drawn from public ranges,
so OLS of the outcome on the treatment, the instrument and the covariates is the
effect plus a bias whose law the source fixes, and the residual spread of that
regression says how strong the confounding was. An analyst who reads the source can
simulate that law; this probe does exactly that. Over SIM_TASKS train tasks under the
public key (ids far past anything used) it records, per tier and treatment kind,

    gap    = (OLS estimate - truth) / B        (B the README's range half-width)
    spread = log(OLS residual SD / B)

and for an audited task it multiplies the reference's likelihood of each candidate
effect b on the range's grid by a product-kernel density estimate of
(gap = (OLS - b) / B, spread) among that cell's simulations. If the generator's
nuisance priors carry no information the factor is flat over the range and the probe
answers as the reference does; if they do, it beats the reference (issue 54
measured +0.02 to +0.04 per task with an analytic version of the same idea).
The simulations are committed, one file per iv generator (iv_nuisance_v6.json for
versions 3-6, which draw iv alike, and iv_nuisance_v7.json; written by
scripts/iv_nuisance.py), so the audit reads them without generating.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import numpy as np

from causal_gym.reference import designs
from causal_gym.reference.design_iv import IvData, _partial, log_likelihood, prepare, reduced_form
from causal_gym.versions import IV_NEUTRAL_CONFOUNDING_VERSION as NEUTRAL_CONFOUNDING_VERSION

#: About a thousand a tier.
SIM_TASKS = 3000
_FIRST_INDEX = 2 * 10**9
#: The generator versions that changed how iv draws its model (versions.py).
IV_GENERATORS = (3, NEUTRAL_CONFOUNDING_VERSION)


def iv_generator(version: int) -> int:
    """The newest version at or before `version` that changed iv: its simulations
    stand for it (named by the newest version that still draws iv that way)."""
    if version >= NEUTRAL_CONFOUNDING_VERSION:
        return NEUTRAL_CONFOUNDING_VERSION
    return NEUTRAL_CONFOUNDING_VERSION - 1


def sims_path(version: int) -> Path:
    """The committed simulations of the iv generator that `version` runs."""
    return Path(__file__).with_name(f"iv_nuisance_v{iv_generator(version)}.json")


def treatment_kind(data: IvData, estimand: str) -> str:
    """The public cell a task's confounding law depends on: a 0/1 treatment whose
    effect varies ("late"), a 0/1 one with a constant effect ("binary"), a count."""
    if not np.isin(data.d, (0.0, 1.0)).all():
        return "count"
    return "late" if estimand == "late" else "binary"


def ols_with_instrument(data: IvData) -> tuple[float, float]:
    """(coefficient of the treatment, residual SD) in y ~ 1 + d + z + x: the
    regression whose bias the confounder's loadings set."""
    y, d, z = _partial(data)
    design = np.column_stack([d, z])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    dof = data.n - data.x.shape[1] - 3
    return float(coef[0]), math.sqrt(float(residual @ residual) / dof)


def task_features(files: dict[str, bytes]) -> tuple[str, IvData, float, float, float]:
    """(kind, the rows, B, OLS estimate, spread) of a staged iv task."""
    readme = designs.parse_design_readme(files["README.md"].decode("utf-8"))
    frame = designs.read_frame(files["data.csv"], readme)
    data = prepare(frame, readme)
    bound = designs.effect_range(readme)
    kind = treatment_kind(data, readme[designs.ESTIMAND])
    ols, sd = ols_with_instrument(data)
    return kind, data, bound, ols, math.log(sd / bound)


def draw_sims(version: int, tasks: int = SIM_TASKS) -> dict[str, list[list[float]]]:
    """[gap, spread] of each simulated train task of generator `version`, by
    "tier/kind"."""
    from causal_gym.generate.pipeline import build_task
    from causal_gym.rng_keys.keys import resolve_key
    from causal_gym.task_id import TaskId

    key = resolve_key(environ={})
    sims: dict[str, list[list[float]]] = {}
    for i in range(tasks):
        tid = TaskId.parse(f"train:iv:{_FIRST_INDEX + i}")
        task = build_task(tid, key, generator_version=version)
        [estimand] = task.hidden.estimands.values()
        kind, _, bound, ols, spread = task_features(dict(task.public.files))
        cell = f"{task.public.tier.value}/{kind}"
        sims.setdefault(cell, []).append([(ols - estimand.value) / bound, spread])
    return dict(sorted(sims.items()))


def sims_json(sims: dict[str, list[list[float]]]) -> str:
    """The committed file's text: one cell a line block, 4 decimals."""
    cells = []
    for cell, rows in sims.items():
        body = ", ".join(f"[{g:.4f}, {s:.4f}]" for g, s in rows)
        cells.append(f' "{cell}": [{body}]')
    return "{\n" + ",\n".join(cells) + "\n}\n"


@cache
def cell_sims(version: int, cell: str) -> np.ndarray | None:
    """The committed simulations of a cell as an (n, 2) array; None if it has none."""
    table = json.loads(sims_path(version).read_text())
    rows = table.get(cell)
    return None if not rows else np.asarray(rows, dtype=float)


def _bandwidths(sims: np.ndarray) -> np.ndarray:
    """Scott's rule per coordinate for a two-dimensional product kernel."""
    return np.maximum(sims.std(axis=0, ddof=1) * len(sims) ** (-1.0 / 6.0), 1e-3)


def nuisance_log_factor(
    grid: np.ndarray, ols: float, spread: float, bound: float, sims: np.ndarray
) -> np.ndarray:
    """Log of the simulated density of (gap, spread) at each candidate effect."""
    h = _bandwidths(sims)
    gaps = (ols - grid) / bound
    near = np.exp(-0.5 * ((sims[:, 1] - spread) / h[1]) ** 2)  # weight of each simulation
    kernel = np.exp(-0.5 * ((gaps[:, None] - sims[None, :, 0]) / h[0]) ** 2)
    return np.log(kernel @ near + 1e-300)


def probe_answer(
    files: dict[str, bytes], tier: str, version: int
) -> tuple[float, float, float] | None:
    """(median, 5%, 95%) of the effect under the reference's likelihood, the range and
    the confounding law of generator `version`; None when the cell has no
    simulations."""
    kind, data, bound, ols, spread = task_features(files)
    sims = cell_sims(iv_generator(version), f"{tier}/{kind}")
    if sims is None:
        return None
    a, s, cov = reduced_form(data)
    grid = np.linspace(-bound, bound, designs.POSTERIOR_GRID)
    log_like = log_likelihood(grid, np.array([a]), np.array([s]), cov)
    log_like = log_like + nuisance_log_factor(grid, ols, spread, bound, sims)[None, :]
    median, low, high = designs.grid_quantiles(grid, log_like)[0]
    return float(median), float(low), float(high)
