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
from dataclasses import dataclass

import numpy as np

from causal_gym.errors import AuditSuiteError
from causal_gym.generate.solvability import check_multi_solvability
from causal_gym.hooks import hooks_of
from causal_gym.make import hidden_scm
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task import Task


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


def spread_checks(
    task: Task, key: DerivationKey, replicates: int, rng: np.random.Generator
) -> list[SpreadCheck]:
    """Every estimand of a task whose family anchors on the task (cate, mediation,
    obs_vs_rct), checked on fresh rows by its family's estimator (FamilyHooks.anchor_spreads)."""
    scm, naming = hidden_scm(task, key)
    rows = check_multi_solvability(dict(task.public.files)).rows
    family = task.public.family.value
    found = hooks_of(family).anchor_spreads(scm, naming, rows, replicates, rng)
    if found is None:
        raise AuditSuiteError(f"{family} has no task anchor to check on fresh rows")
    return [
        SpreadCheck(
            task.public.task_id,
            task.public.tier.value,
            name,
            task.hidden.estimands[name].reference_width,
            centre,
            spread,
            replicates,
        )
        for name, (centre, spread) in found.items()
    ]


def ratio_tolerance(replicates: int, sds: float = 4.0) -> float:
    """How far a ratio may stray from 1 by the SD's Monte Carlo error alone."""
    return sds / math.sqrt(2.0 * (replicates - 1))
