"""Run an audit suite: materialize its tasks under several keys, hand each to the
suite's per-task audit, and return the rows for its summary.

Tasks are independent, so they are spread over forked worker processes. The keys are
module state set before the fork: workers inherit them in memory, and only a key's
position in the list and a task id ever cross a pipe (never a key, never a truth).
Each worker returns floats, not score records, which are sealed against pickling.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from causal_gym.errors import GenerationError
from causal_gym.generate.draw import plan_task, tier_train_ids
from causal_gym.make import generate_task
from causal_gym.plan.tiers import Tier
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.task import Task
from causal_gym.task_id import Namespace, TaskId

if TYPE_CHECKING:
    from causal_gym.audit.suite import AuditRun, AuditSuite

Tick = Callable[[str], None]
_KEYS: list[DerivationKey] = []  # set by run_audit before the workers fork
_AUDIT: list[Callable[[Task, str], object]] = []  # likewise: the suite's per-task audit


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


def run_audit(
    suite: AuditSuite,
    keys: list[tuple[str, DerivationKey]],
    per_family: int,
    namespace: str = "train",
    workers: int = 1,
    tick: Tick | None = None,
) -> AuditRun:
    """Every (key, family, index) task of the suite's families audited by its
    `audit_task`, rows in a fixed order whatever the worker count, and the ids that
    failed, by key label. A suite of one tier (expert, real) on train draws each
    family's first train tasks of that tier instead of its first indices."""
    from causal_gym.audit.suite import AuditRun

    _KEYS[:] = [key for _, key in keys]
    _AUDIT[:] = [suite.audit_task]

    def ids(key: DerivationKey, family: str) -> list[str]:
        if suite.tier is not None and namespace == "train":
            return tier_train_ids(key, family, per_family, Tier(suite.tier))
        return [f"{namespace}:{family}:{index}" for index in range(per_family)]

    jobs = [
        (position, label, task_id)
        for position, (label, key) in enumerate(keys)
        for family in suite.families
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
    return AuditRun(
        rows=tuple(rows[(label, tid)] for _, label, tid in jobs if (label, tid) in rows),
        failed={label: sorted(ids) for label, ids in failed.items()},
        fingerprints={label: key.fingerprint for label, key in keys},
        namespace=namespace,
        per_family=per_family,
        families=suite.families,
    )
