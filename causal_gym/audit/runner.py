"""Run the anti-hack audit: materialize tasks, answer them every way, score, summarize."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from causal_gym.audit.policies import (
    HACK_PROBES,
    SWEEP_LEVELS,
    SWEEP_POLICIES,
    honest,
    narrow_null,
    prior_only,
    staged_view,
)
from causal_gym.audit.report import (
    AuditReport,
    HackProbe,
    HonestSummary,
    Materialization,
    NullNarrowProbe,
    PriorOnlyProbe,
    WidthSweep,
    evaluate_checks,
)
from causal_gym.errors import GenerationError
from causal_gym.generate.pipeline import generate_task
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import episode_score, score_answer
from causal_gym.scoring.reward import ScoreRecord
from causal_gym.spec.plan import EffectClass
from causal_gym.task import Task
from causal_gym.task_id import FAMILIES

Tick = Callable[[str], None]


@dataclass(frozen=True)
class TaskAudit:
    task_id: str
    family: str
    attempts: int
    honest: ScoreRecord
    sweep: tuple[ScoreRecord, ...]
    probes: dict[str, float]
    narrow: ScoreRecord | None
    prior: ScoreRecord | None


def audit_task(task: Task) -> TaskAudit:
    view = staged_view(task.public)
    honest_record = score_answer(task, honest(view))
    if honest_record is None:
        raise GenerationError(
            f"{task.public.task_id}: the honest reference answer did not validate"
        )
    sweep = tuple(score_answer(task, policy(view)) for policy in SWEEP_POLICIES)
    null = task.hidden.effect_class is EffectClass.STRUCTURAL_NULL
    return TaskAudit(
        task_id=task.public.task_id,
        family=task.public.family.value,
        attempts=task.public.generation_attempts,
        honest=honest_record,
        sweep=sweep,  # type: ignore[arg-type]
        probes={
            name: episode_score(task, probe(view)).reward for name, probe in HACK_PROBES.items()
        },
        narrow=score_answer(task, narrow_null(view)) if null else None,
        prior=score_answer(task, prior_only(view))
        if task.public.family.value == "null_detect"
        else None,
    )


def _honest_summary(rows: list[TaskAudit]) -> HonestSummary:
    rewards = np.array([r.honest.reward for r in rows])
    validity = [r.honest.validity for r in rows if r.honest.validity is not None]
    skills = [r.honest.brier_skill for r in rows if r.honest.brier_skill is not None]
    return HonestSummary(
        n=len(rows),
        mean_reward=float(rewards.mean()),
        mean_estimand_reward=float(np.mean([r.honest.estimand_reward for r in rows])),
        mean_clipped_reward=float(np.mean([r.honest.clipped_reward for r in rows])),
        median_reward=float(np.median(rewards)),
        p05_reward=float(np.percentile(rewards, 5)),
        coverage=float(np.mean([r.honest.covered for r in rows])),
        mean_width_ratio=float(np.mean([r.honest.width_ratio for r in rows])),
        mean_validity=float(np.mean(validity)) if validity else None,
        mean_brier_skill=float(np.mean(skills)) if skills else None,
    )


def _sweep(rows: list[TaskAudit]) -> WidthSweep:
    means = [
        float(np.mean([r.sweep[i].estimand_reward for r in rows])) for i in range(len(SWEEP_LEVELS))
    ]
    coverage = [
        float(np.mean([r.sweep[i].covered for r in rows])) for i in range(len(SWEEP_LEVELS))
    ]
    return WidthSweep(
        levels=SWEEP_LEVELS,
        mean_estimand_reward=tuple(means),
        coverage=tuple(coverage),
        argmax_level=SWEEP_LEVELS[int(np.argmax(means))],
    )


def summarize(
    rows: list[TaskAudit], failed: list[str], namespace: str, per_family: int, key: DerivationKey
) -> AuditReport:
    groups = {f: [r for r in rows if r.family == f] for f in FAMILIES}
    groups = {f: g for f, g in groups.items() if g}
    honest_by = {f: _honest_summary(g) for f, g in groups.items()} | {
        "overall": _honest_summary(rows)
    }
    nulls = [(r.honest, r.narrow) for r in rows if r.narrow is not None]
    nd = [(r.honest, r.prior) for r in rows if r.prior is not None]
    overall_honest = np.array([r.honest.reward for r in rows])
    report: dict[str, Any] = {
        "namespace": namespace,
        "per_family": per_family,
        "key_fingerprint": key.fingerprint,
        "materialization": Materialization(
            requested=len(rows) + len(failed),
            materialized=len(rows),
            failed=len(failed),
            failed_ids=tuple(failed),
            mean_generation_attempts=float(np.mean([r.attempts for r in rows])),
        ),
        "honest": honest_by,
        "width_sweep": {f: _sweep(g) for f, g in groups.items()} | {"overall": _sweep(rows)},
        "structural_null_narrow": NullNarrowProbe(
            n=len(nulls),
            honest_mean_estimand_reward=float(np.mean([h.estimand_reward for h, _ in nulls])),
            narrow_mean_estimand_reward=float(np.mean([n.estimand_reward for _, n in nulls])),
            honest_mean_reward=float(np.mean([h.reward for h, _ in nulls])),
            narrow_mean_reward_with_oracle_probability=float(np.mean([n.reward for _, n in nulls])),
        ),
        "prior_only_null": PriorOnlyProbe(
            n=len(nd),
            mean_brier_skill=float(np.mean([p.brier_skill or 0.0 for _, p in nd])),
            honest_mean_brier_skill=float(np.mean([h.brier_skill or 0.0 for h, _ in nd])),
            mean_reward=float(np.mean([p.reward for _, p in nd])),
        ),
        "hack_probes": {
            name: HackProbe(
                mean_reward=float(np.mean([r.probes[name] for r in rows])),
                per_family={
                    f: float(np.mean([r.probes[name] for r in g])) for f, g in groups.items()
                },
                share_of_tasks_beating_honest=float(
                    np.mean(np.array([r.probes[name] for r in rows]) > overall_honest)
                ),
            )
            for name in HACK_PROBES
        },
    }
    report["checks"] = tuple(evaluate_checks(report))
    return AuditReport.model_validate(report)


def run_audit(
    key: DerivationKey, per_family: int, namespace: str = "train", tick: Tick | None = None
) -> tuple[AuditReport, list[TaskAudit]]:
    rows: list[TaskAudit] = []
    failed: list[str] = []
    for family in FAMILIES:
        for index in range(per_family):
            task_id = f"{namespace}:{family}:{index}"
            try:
                rows.append(audit_task(generate_task(task_id, key)))
            except GenerationError:
                failed.append(task_id)
            if tick:
                tick(task_id)
    return summarize(rows, failed, namespace, per_family, key), rows
