"""Does a task's reward anchor match its estimator's spread on fresh rows?

Reward version 3 anchors cate, mediation and obs_vs_rct on the efficient linear
estimator's 90% width, computed from the hidden SCM (each family's anchor.py). This
check takes the estimator itself, runs it on `replicates` fresh clean samples of the
task's SCM at the staged file's clean size, and compares 2 z_0.95 times the SD of its
estimates with the anchor: the ratio should be 1 up to the Monte Carlo error of an SD
(1 / sqrt(2 (replicates - 1)), 3.5% at 400) and OLS's finite-sample factor (about
1 + p / n, at most a few percent here). The estimator adjusts for the set the
anchor found best for that estimand (with its own keyed draw of T's side).

A scripted check, not a part of generation: it reads the truth and samples from the
hidden SCM (make.hidden_scm), which nothing staged or scored does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from causal_gym.families.cate.anchor import CATE_ANCHOR_DRAWS
from causal_gym.families.obs_vs_rct.anchor import TRIAL_TREATMENT_VARIANCE
from causal_gym.generate.efficiency import outcome_noise_variance
from causal_gym.generate.ols_anchor import (
    OLS_ANCHOR_DRAWS,
    CandidateSet,
    TreatmentSide,
    candidate_sets,
    design_matrix,
    draw_treatment_side,
    treatment_residual,
)
from causal_gym.generate.solvability import check_multi_solvability
from causal_gym.make import hidden_scm
from causal_gym.reference.analyst import Z
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm
from causal_gym.scm.sample import CleanSample, sample_clean
from causal_gym.task import Task

#: An estimator: a clean sample in, each estimand's estimate out.
Estimator = Callable[[CleanSample], dict[str, float]]


@dataclass(frozen=True)
class SpreadCheck:
    """One estimand: its anchor r, the centre of the efficient width the anchor is
    built on (from the formulas, with this check's own draw of T's side), and 2 z_0.95
    times the SD of the efficient estimator on fresh rows."""

    task_id: str
    tier: str
    estimand: str
    anchor: float
    centre: float
    spread_width: float
    replicates: int

    @property
    def ratio(self) -> float:
        """Spread over centre: 1 up to the Monte Carlo and finite-sample errors."""
        return self.spread_width / self.centre

    @property
    def shrink(self) -> float:
        """The anchor over the centre: where the 5% quantile sits below it."""
        return self.anchor / self.centre


def _ols(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return np.asarray(coef)


def _regressors(
    scm: Scm, sample: CleanSample, members: tuple[str, ...], *front: np.ndarray
) -> np.ndarray:
    n = sample.n_rows
    adjust = design_matrix(scm, sample.columns, list(members))
    return np.column_stack([np.ones(n), *front, adjust])


def _best(variances: list[dict[str, float]], name: str) -> int:
    return int(np.argmin([v[name] for v in variances]))


#: Each estimand's estimator on one clean sample, and its per-row variance.
Plan = dict[str, tuple[Estimator, float]]


def _cate(
    scm: Scm, side: TreatmentSide, sets: tuple[CandidateSet, ...], levels: tuple[str, ...]
) -> Plan:
    from causal_gym.families.cate.anchor import candidate_level_variances

    assert scm.modifier is not None
    modifier = scm.modifier
    variances = [
        dict(zip(levels, candidate_level_variances(scm, side, c), strict=True)) for c in sets
    ]

    def estimator(members: tuple[str, ...], k: int) -> Estimator:
        def run(sample: CleanSample) -> dict[str, float]:
            codes = sample.columns[modifier]
            t = sample.columns[TREATMENT_ID].astype(np.float64)
            cells = [t * (codes == j) for j in range(len(levels))]
            dummies = [(codes == j).astype(np.float64) for j in range(1, len(levels))]
            rest = tuple(m for m in members if m != modifier)
            x = _regressors(scm, sample, rest, *cells, *dummies)
            return {levels[k]: float(_ols(x, sample.columns[OUTCOME_ID])[1 + k])}

        return run

    plan = {}
    for k, level in enumerate(levels):
        best = _best(variances, level)
        plan[level] = (estimator(sets[best].members, k), variances[best][level])
    return plan


def _mediation(scm: Scm, side: TreatmentSide, sets: tuple[CandidateSet, ...]) -> Plan:
    from causal_gym.families.mediation.anchor import MEDIATOR_ID, candidate_parts

    variances = [
        {k: float(v) for k, v in candidate_parts(scm, side, c).variances().items()} for c in sets
    ]

    def estimator(members: tuple[str, ...], name: str) -> Estimator:
        def run(sample: CleanSample) -> dict[str, float]:
            t = sample.columns[TREATMENT_ID].astype(np.float64)
            m = sample.columns[MEDIATOR_ID]
            a = _ols(_regressors(scm, sample, members, t), m)[1]
            outcome = _ols(_regressors(scm, sample, members, t, m), sample.columns[OUTCOME_ID])
            direct, b = outcome[1], outcome[2]
            effects = {"direct": direct, "indirect": a * b, "total": direct + a * b}
            return {name: float(effects[name])}

        return run

    plan = {}
    for name in ("direct", "indirect", "total"):
        best = _best(variances, name)
        plan[name] = (estimator(sets[best].members, name), variances[best][name])
    return plan


def spread_checks(
    task: Task, key: DerivationKey, replicates: int, rng: np.random.Generator
) -> list[SpreadCheck]:
    """Every estimand of a cate, mediation or obs_vs_rct task, checked on fresh rows."""
    scm, naming = hidden_scm(task, key)
    rows = check_multi_solvability(dict(task.public.files)).rows
    sets = candidate_sets(scm)
    family = task.public.family.value
    draws = CATE_ANCHOR_DRAWS if family == "cate" else OLS_ANCHOR_DRAWS
    side = draw_treatment_side(scm, naming.marginals, rng, draws)
    anchors = {name: e.reference_width for name, e in task.hidden.estimands.items()}

    def fresh(n: int, randomized: bool = False) -> CleanSample:
        return sample_clean(scm, n, rng, naming.marginals, randomized=randomized)

    estimates: dict[str, list[float]] = {name: [] for name in anchors}
    centres: dict[str, float] = {}
    if family == "obs_vs_rct":
        base = outcome_noise_variance(scm)
        extract = [c.outcome_variance(base) / treatment_residual(side, c.members) for c in sets]
        best = sets[int(np.argmin(extract))].members
        n_o, n_t = rows["data.csv"], rows["trial.csv"]
        w_o, w_t = n_o / min(extract), n_t / (base / TRIAL_TREATMENT_VARIANCE)
        centres["ate"] = 2.0 * Z / math.sqrt(w_o + w_t)
        everything = tuple(scm.pre_treatment_ids)
        for _ in range(replicates):
            obs, trial = fresh(n_o), fresh(n_t, randomized=True)
            o = _treatment_coefficient(scm, obs, best)
            r = _treatment_coefficient(scm, trial, everything)
            estimates["ate"].append(float((w_o * o + w_t * r) / (w_o + w_t)))
    else:
        n = rows["data.csv"]
        if family == "cate":
            levels = naming.columns[scm.modifier].levels if scm.modifier is not None else ()
            plan = _cate(scm, side, sets, levels)
        else:
            plan = _mediation(scm, side, sets)
        centres = {name: 2.0 * Z * math.sqrt(variance / n) for name, (_, variance) in plan.items()}
        for _ in range(replicates):
            sample = fresh(n)
            for run, _ in plan.values():
                for name, value in run(sample).items():
                    estimates[name].append(value)
    tier = task.public.tier.value
    return [
        SpreadCheck(
            task.public.task_id,
            tier,
            name,
            anchors[name],
            centres[name],
            2.0 * Z * float(np.std(values, ddof=1)),
            replicates,
        )
        for name, values in estimates.items()
    ]


def _treatment_coefficient(scm: Scm, sample: CleanSample, members: tuple[str, ...]) -> float:
    t = sample.columns[TREATMENT_ID].astype(np.float64)
    return float(_ols(_regressors(scm, sample, members, t), sample.columns[OUTCOME_ID])[1])


def ratio_tolerance(replicates: int, sds: float = 4.0) -> float:
    """How far a ratio may stray from 1 by the SD's Monte Carlo error alone."""
    return sds / math.sqrt(2.0 * (replicates - 1))
