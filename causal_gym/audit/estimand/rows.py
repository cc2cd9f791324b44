"""The audit of the multi-estimand families (cate, mediation, obs_vs_rct): each task
answered honestly, at every sweep level and by every probe, and scored per estimand.

The rows are plain floats like every suite's (runner.py forks them); the summary
and checks are in report.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from causal_gym.audit.knowledge import staged_features
from causal_gym.audit.model_gain import answer_intervals, expected_estimand_gain, task_gain
from causal_gym.audit.policies import SWEEP_LEVELS
from causal_gym.audit.rows import TaskRow, row_start, scored_answer
from causal_gym.contracts.families import contract_of
from causal_gym.reference import estimand_probes as probes
from causal_gym.reference.estimands import Analysis, residual_sd
from causal_gym.scoring.answer import episode_score
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.task import Task

SWEEP = tuple(partial(probes.at_level, level=level) for level in SWEEP_LEVELS)


def probe_names(family: str) -> tuple[str, ...]:
    """The probes the audit runs on a family: the shared ones, then its own."""
    return (*probes.SHARED_PROBES, *contract_of(family).extra_probes)


def tested_estimands(family: str) -> tuple[str, ...]:
    """The estimands whose coverage is tested: each one, except cate's levels,
    which vary by task and share one regression; there the first level in sorted
    order stands in (one independent interval per task) and the pooled coverage of
    every level is reported beside it."""
    return (
        ("first_level",)
        if contract_of(family).per_level_estimands
        else contract_of(family).estimands
    )


@dataclass(frozen=True)
class EstimandRow(TaskRow):
    covered: dict[str, bool]  # per tested estimand
    levels: int  # estimands in the task (cate: its levels)
    levels_covered: int
    brier_skill: float | None
    sweep_estimand: tuple[float, ...]
    sweep_covered: tuple[float, ...]  # share of the task's estimands covered
    probes: dict[str, float]
    prior_skill: float | None
    prior_reward: float | None
    #: The bayes-prior probe's reward (the posterior under the generator's priors).
    bayes_reward: float = 0.0
    #: obs_vs_rct: whether the extract is confounded, and the adjusted residual SD of
    #: data.csv and of trial.csv (None for the other families).
    confounded: bool | None = None
    residual_sds: tuple[float, float] | None = None
    leak_features: tuple[float, ...] = ()
    #: The bayes-prior probe's expected gain under its own posterior (model_gain.py),
    #: in task reward; and, where a family answers several named estimands
    #: (mediation), its scored and expected gains per estimand in estimand reward.
    model_gain: float | None = None
    estimand_gains: dict[str, float] | None = None
    estimand_model_gains: dict[str, float] | None = None


def _expected_gains(task: Task, analysis: Analysis, answer: probes.Answer) -> dict[str, float]:
    """Each estimand's expected gain of the bayes-prior answer over the honest one,
    under the posterior the probe built it from (its prior, the reference's fit)."""
    spec = contract_of(task.public.family)
    priors = probes.estimand_priors(analysis.readme, spec.name)
    ours = answer_intervals(task, answer)
    theirs = answer_intervals(task, probes.honest(analysis))
    gains = {}
    for name, truth in task.hidden.estimands.items():
        fit = analysis.fits[name]
        prior = priors["level" if spec.per_level_estimands else name]
        gains[name] = expected_estimand_gain(
            prior, fit.estimate, fit.se, ours[name], theirs[name], truth
        )
    return gains


def _covered_share(record: ScoreRecord) -> float:
    return sum(e.covered for e in record.estimands.values()) / len(record.estimands)


def audit_estimand_task(task: Task, key_label: str) -> EstimandRow:
    family = task.public.family.value
    analysis = Analysis.parse(dict(task.public.files))
    ref = scored_answer(task, probes.honest(analysis))
    sweep = [scored_answer(task, policy(analysis)) for policy in SWEEP]
    by_name = {**probes.SHARED_PROBES, **probes.FAMILY_PROBES}
    scores = {
        name: episode_score(task, by_name[name](analysis)).reward for name in probe_names(family)
    }
    prior = (
        scored_answer(task, probes.prior_only(analysis)) if ref.brier_skill is not None else None
    )
    bayes_answer = probes.bayes_prior(analysis)
    bayes = scored_answer(task, bayes_answer)
    expected = _expected_gains(task, analysis, bayes_answer)
    spec = contract_of(family)
    named = len(spec.estimands) > 1 and not spec.per_level_estimands
    first = next(iter(ref.estimands.values()))
    covered = {
        name: (first.covered if name == "first_level" else ref.estimands[name].covered)
        for name in tested_estimands(family)
    }
    confounded, spreads = None, None
    if analysis.obs_rct is not None and analysis.trial is not None:
        confounded = task.hidden.effect_class.value == "confounded"
        d = analysis.dictionary
        spreads = (residual_sd(analysis.frame, d), residual_sd(analysis.trial, d))
    return EstimandRow(
        **row_start(task, key_label, ref),
        covered=covered,
        levels=len(ref.estimands),
        levels_covered=sum(e.covered for e in ref.estimands.values()),
        brier_skill=ref.brier_skill,
        sweep_estimand=tuple(s.estimand_reward for s in sweep),
        sweep_covered=tuple(_covered_share(s) for s in sweep),
        probes=scores,
        prior_skill=prior.brier_skill if prior else None,
        prior_reward=prior.reward if prior else None,
        bayes_reward=bayes.reward,
        confounded=confounded,
        residual_sds=spreads,
        leak_features=staged_features(task.public),
        model_gain=task_gain(task, ref, expected),
        estimand_gains=(
            {n: bayes.estimands[n].reward - ref.estimands[n].reward for n in expected}
            if named
            else None
        ),
        estimand_model_gains=expected if named else None,
    )
