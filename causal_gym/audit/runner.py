"""Run the anti-hack audit: materialize tasks under several keys, answer each one
every way, score, and hand plain numbers to the summary.

Tasks are independent, so they are spread over forked worker processes. The keys are
module state set before the fork: workers inherit them in memory, and only a key's
position in the list and a task id ever cross a pipe (never a key, never a truth).
Each worker returns floats, not score records, which are sealed against pickling.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from causal_gym.audit.knowledge import staged_features
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
from causal_gym.errors import GenerationError
from causal_gym.families.registry import contract_of
from causal_gym.generate.pipeline import generate_task
from causal_gym.plan.draw import plan_task
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import Tier
from causal_gym.reference.aipw import aipw_submission
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import episode_score, score_answer
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.task import HiddenTruth, Task
from causal_gym.task_id import EVAL_V1_FAMILIES, Namespace, TaskId

Tick = Callable[[str], None]
_KEYS: list[DerivationKey] = []  # set by run_audit before the workers fork
_AUDIT: list[Callable[[Task, str], object]] = []  # likewise: the per-task audit


@dataclass(frozen=True)
class TaskAudit:
    """One task's numbers: the honest reference, the sweep, the probes, the AIPW row."""

    key: str
    task_id: str
    family: str
    attempts: int
    reward: float
    estimand_reward: float
    clipped_reward: float
    covered: bool
    width_ratio: float
    validity: float | None
    brier_skill: float | None
    sweep_estimand: tuple[float, ...]
    sweep_covered: tuple[bool, ...]
    probes: dict[str, float]
    narrow_estimand: float | None
    narrow_reward: float | None
    prior_skill: float | None
    prior_reward: float | None
    aipw_reward: float
    aipw_covered: bool
    #: The bayes-prior probe's reward (what knowing the generator's effect sizes buys).
    bayes_reward: float
    #: knowledge.LEAKAGE_FEATURES of the staged files, and whether the effect is zero.
    leak_features: tuple[float, ...]
    structural_null: bool
    #: OLS on the declared set minus its instruments and irrelevant columns, with its
    #: own 90% interval (ate and adjustment, linear tiers): the more efficient analyst
    #: the anchor must not punish (None elsewhere).
    efficient_reward: float | None
    #: An expert-tier task (a fifth of these families' train tasks): its honest answer
    #: is flexible.py's, and the linear third-party analyst is not compared on it.
    expert: bool = False


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


def scored_answer(task: Task, answer: dict[str, object]) -> ScoreRecord:
    """The answer's score record; an audit answer that does not validate is a bug."""
    record = score_answer(task, answer)
    if record is None:
        raise GenerationError(f"{task.public.task_id}: an audit answer did not validate")
    return record


def audit_task(task: Task, key_label: str) -> TaskAudit:
    view = staged_view(task.public)
    ref = scored_answer(task, honest(view))
    sweep = [scored_answer(task, policy(view)) for policy in SWEEP_POLICIES]
    null = task.hidden.effect_class is EffectClass.STRUCTURAL_NULL
    narrow = scored_answer(task, narrow_null(view)) if null else None
    spec = contract_of(task.public.family)
    prior = scored_answer(task, prior_only(view)) if "prior_only" in spec.extra_probes else None
    files = task.public.files
    aipw = scored_answer(task, aipw_submission(files["README.md"].decode(), files["data.csv"]))
    bayes = scored_answer(task, bayes_prior(view))
    efficient = None
    if task.public.tier.value != "expert" and task.public.family.value in EFFICIENT_FAMILIES:
        efficient = scored_answer(task, efficient_ols(view, task.hidden)).reward
    return TaskAudit(
        key=key_label,
        task_id=task.public.task_id,
        family=task.public.family.value,
        attempts=task.public.generation_attempts,
        reward=ref.reward,
        estimand_reward=ref.estimand_reward,
        clipped_reward=ref.clipped_reward,
        covered=ref.covered,
        width_ratio=ref.width_ratio,
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
        expert=task.public.tier.value == "expert",
    )


Job = tuple[int, str, str]  # (key position, key label, task id)
Outcome = tuple[str, str, Any]  # (key label, task id, row or None if failed)


def materialize(task_id: str, key: DerivationKey) -> Task:
    """A task as its split would stage it; eval-expert-v1 ids (the expert audit) at the
    split's planned size under any key and past the manifest's last index, so the
    audit can draw as many expert tasks as it needs."""
    tid = TaskId.parse(task_id)
    if tid.namespace is Namespace.EVAL_EXPERT_V1:
        return generate_task(tid, key, staged_rows=plan_task(key, tid).base_rows)
    return generate_task(tid, key)


def _work(job: Job) -> Outcome:
    position, label, task_id = job
    try:
        return label, task_id, _AUDIT[0](materialize(task_id, _KEYS[position]), label)
    except GenerationError:
        return label, task_id, None


def _outcomes(jobs: list[Job], workers: int) -> Iterator[Outcome]:
    if workers <= 1:
        yield from map(_work, jobs)
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap_unordered(_work, jobs, chunksize=4)


def expert_train_ids(key: DerivationKey, family: str, count: int) -> list[str]:
    """The first `count` train ids of `family` whose plan is expert (a disclosed fifth
    of them): the expert tier as streams serve it, at the newest generator version.
    Only the plan is drawn for the others, which costs an HMAC and a few draws."""
    found: list[str] = []
    index = 0
    while len(found) < count:
        task_id = f"train:{family}:{index}"
        if plan_task(key, TaskId.parse(task_id)).tier is Tier.EXPERT:
            found.append(task_id)
        index += 1
    return found


def run_audit(
    keys: list[tuple[str, DerivationKey]],
    per_family: int,
    namespace: str = "train",
    workers: int = 1,
    tick: Tick | None = None,
    families: tuple[str, ...] = EVAL_V1_FAMILIES,
    audit: Callable[[Task, str], Any] = audit_task,
    expert_tier: bool = False,
) -> tuple[list[Any], dict[str, list[str]]]:
    """Every (key, family, index) task audited by `audit` (the seed families' audit
    by default; audit/estimand_audit.py for the multi-estimand ones); rows in a
    fixed order whatever the worker count, and the ids that failed, by key label.
    `expert_tier` draws each family's first expert train tasks instead of its first
    indices (the expert audit's default)."""
    _KEYS[:] = [key for _, key in keys]
    _AUDIT[:] = [audit]

    def ids(key: DerivationKey, family: str) -> list[str]:
        if expert_tier:
            return expert_train_ids(key, family, per_family)
        return [f"{namespace}:{family}:{index}" for index in range(per_family)]

    jobs = [
        (position, label, task_id)
        for position, (label, key) in enumerate(keys)
        for family in families
        for task_id in ids(key, family)
    ]
    rows: dict[tuple[str, str], Any] = {}
    failed: dict[str, list[str]] = {label: [] for label, _ in keys}
    try:
        for label, task_id, row in _outcomes(jobs, workers):
            if row is None:
                failed[label].append(task_id)
            else:
                rows[(label, task_id)] = row
            if tick:
                tick(f"{label} {task_id}")
    finally:
        _KEYS.clear()
        _AUDIT.clear()
    ordered = [rows[(label, tid)] for _, label, tid in jobs if (label, tid) in rows]
    return ordered, {label: sorted(ids) for label, ids in failed.items()}
