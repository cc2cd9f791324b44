"""The seed suite's rows (ate, adjustment, null_detect): each task answered by the
honest reference, at every sweep level, by every hack probe, by the third-party AIPW
analyst, by the bayes-prior probe and (linear ate and adjustment) by the more
efficient OLS analyst. Rows are plain floats; report.py summarizes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from causal_gym.audit.knowledge import staged_features
from causal_gym.audit.model_gain import answer_intervals, expected_estimand_gain, task_gain
from causal_gym.audit.policies import (
    HACK_PROBES,
    SWEEP_POLICIES,
    Staged,
    bayes_prior,
    fitted,
    honest,
    narrow_null,
    prior_only,
    staged_view,
)
from causal_gym.audit.rows import AteRow, row_start, scored_answer
from causal_gym.contracts.families import contract_of
from causal_gym.plan.task_plan import EffectClass
from causal_gym.reference.aipw import aipw_submission
from causal_gym.scoring.answer import episode_score
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.task import HiddenTruth, Task


@dataclass(frozen=True)
class SeedRow(AteRow):
    """One task's numbers: the honest reference, the sweep, the probes, the AIPW row."""

    clipped_reward: float
    narrow_estimand: float | None
    narrow_reward: float | None
    aipw_reward: float
    aipw_covered: bool
    #: OLS on the declared set minus its instruments and irrelevant columns, with its
    #: own 90% interval (ate and adjustment, linear tiers): the more efficient analyst
    #: the anchor must not punish (None elsewhere).
    efficient_reward: float | None
    #: A nonlinear task (the expert tier, a fifth of these families' train tasks, and
    #: half the real tier's on tables that support it): its honest answer is
    #: flexible.py's, and the linear third-party analyst is not compared on it.
    expert: bool = False
    #: The bayes-prior probe's expected gain under its own posterior (model_gain.py);
    #: 0 on null_detect, whose probe is the reference.
    model_gain: float | None = None


#: The families the efficient analyst is compared on (null_detect's honest answer is
#: the posterior, not an interval it could be compared with).
EFFICIENT_FAMILIES = ("ate", "adjustment")
#: The roles an efficient analyst leaves out: they only take variance from T.
_INEFFICIENT_ROLES = ("instrument", "irrelevant")


def efficient_ols(view: Staged, truth: HiddenTruth) -> dict[str, object]:
    """What an analyst who found the instruments and the irrelevant columns (a real
    skill; the audit takes them from the hidden roles) answers: OLS without them."""
    kept = tuple(c for c in truth.pre_treatment if truth.roles[c] not in _INEFFICIENT_ROLES)
    return fitted(view, kept, list(kept))


def expected_gain(task: Task, view: Staged, answer: dict[str, object], ref: ScoreRecord) -> float:
    """The bayes-prior answer's expected gain over the honest one under the posterior
    it was built from (the disclosed prior, the reference's fit)."""
    if view.dictionary.family == "null_detect":
        return 0.0
    [(name, truth)] = task.hidden.estimands.items()
    ours, theirs = answer_intervals(task, answer), answer_intervals(task, honest(view))
    fit = view.reference
    gain = expected_estimand_gain(
        view.effect_prior, fit.estimate, fit.se, ours[name], theirs[name], truth
    )
    return task_gain(task, ref, {name: gain})


def audit_task(task: Task, key_label: str) -> SeedRow:
    view = staged_view(task.public)
    ref = scored_answer(task, honest(view))
    sweep = [scored_answer(task, policy(view)) for policy in SWEEP_POLICIES]
    null = task.hidden.effect_class is EffectClass.STRUCTURAL_NULL
    narrow = scored_answer(task, narrow_null(view)) if null else None
    spec = contract_of(task.public.family)
    prior = scored_answer(task, prior_only(view)) if "prior_only" in spec.extra_probes else None
    files = task.public.files
    aipw = scored_answer(task, aipw_submission(files["README.md"].decode(), files["data.csv"]))
    bayes_answer = bayes_prior(view)
    bayes = scored_answer(task, bayes_answer)
    efficient = None
    nonlinear = view.dictionary.nonlinear  # the README says so: the flexible reference
    if not nonlinear and task.public.family.value in EFFICIENT_FAMILIES:
        efficient = scored_answer(task, efficient_ols(view, task.hidden)).reward
    return SeedRow(
        **row_start(task, key_label, ref),
        clipped_reward=ref.clipped_reward,
        covered=ref.covered,
        validity=ref.validity,
        brier_skill=ref.brier_skill,
        sweep_estimand=tuple(s.estimand_reward for s in sweep),
        sweep_covered=tuple(s.covered for s in sweep),
        probes={name: episode_score(task, p(view)).reward for name, p in HACK_PROBES.items()},
        narrow_estimand=narrow.estimand_reward if narrow else None,
        narrow_reward=narrow.reward if narrow else None,
        prior_skill=prior.brier_skill if prior else None,
        prior_reward=prior.reward if prior else None,
        aipw_reward=aipw.reward,
        aipw_covered=aipw.covered,
        bayes_reward=bayes.reward,
        leak_features=staged_features(task.public),
        structural_null=null,
        efficient_reward=efficient,
        expert=nonlinear,
        model_gain=expected_gain(task, view, bayes_answer, ref),
    )
