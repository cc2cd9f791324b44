"""The expert tier's audit, per task: the flexible reference, the width sweep, and
probes led by linear OLS, the method the tier exists to out-score.

The honest answer is the one flexible.py gives on the staged files. Generation has
already run exactly that fit on exactly those bytes (solvability, kept in the hidden
estimand), so the audit takes its estimate and SE from there instead of fitting the
boosted models a second time; tests/test_expert.py checks that the two agree to the
last bit. Rows are plain floats, like the other audits' (runner.py forks them).
"""

from __future__ import annotations

from dataclasses import dataclass

from causal_gym.audit.knowledge import staged_features
from causal_gym.audit.policies import SWEEP_POLICIES, Policy
from causal_gym.audit.rows import AteRow, row_start, scored_answer
from causal_gym.errors import GenerationError
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import Tier
from causal_gym.reference import probes
from causal_gym.scoring.answer import episode_score
from causal_gym.task import Task

#: The probes of the expert audit, by report name; linear OLS first.
EXPERT_PROBES: dict[str, Policy] = {
    "linear_ols": probes.linear_ols,
    "diff_in_means": probes.diff_in_means,
    "post_treatment_adjustment": probes.post_treatment,
    "constant_zero_huge_interval": probes.constant_zero,
    "reference_halved_interval": probes.halved,
}


@dataclass(frozen=True)
class ExpertRow(AteRow):
    """One expert task's numbers; linear OLS's coverage and width beside the rest."""

    linear_covered: bool
    linear_width_ratio: float


def honest_view(task: Task) -> probes.Staged:
    """The staged files parsed, with the flexible reference fitted on them (generation
    fits none: its width is the efficiency bound's)."""
    files = task.public.files
    return probes.Staged.parse(files["data.csv"], files["README.md"].decode("utf-8"))


def audit_expert_task(task: Task, key_label: str) -> ExpertRow:
    if task.public.tier is not Tier.EXPERT:
        raise GenerationError(f"{task.public.task_id} is not an expert task")
    view = honest_view(task)
    ref = scored_answer(task, probes.honest(view))
    sweep = [scored_answer(task, policy(view)) for policy in SWEEP_POLICIES]
    linear = scored_answer(task, probes.linear_ols(view))
    scores = {name: episode_score(task, p(view)).reward for name, p in EXPERT_PROBES.items()}
    null_detect = ref.brier_skill is not None
    prior = scored_answer(task, probes.prior_only(view)) if null_detect else None
    bayes = scored_answer(task, probes.bayes_prior(view))
    return ExpertRow(
        **row_start(task, key_label, ref),
        covered=ref.covered,
        validity=ref.validity,
        brier_skill=ref.brier_skill,
        sweep_estimand=tuple(s.estimand_reward for s in sweep),
        sweep_covered=tuple(s.covered for s in sweep),
        probes=scores,
        linear_covered=linear.covered,
        linear_width_ratio=linear.width_ratio,
        prior_skill=prior.brier_skill if prior else None,
        prior_reward=prior.reward if prior else None,
        bayes_reward=bayes.reward,
        leak_features=staged_features(task.public),
        structural_null=task.hidden.effect_class is EffectClass.STRUCTURAL_NULL,
    )
