"""`generate_task`: a task id and a key in, a task out (the one public way to make a
task, as Gymnasium's `make` is for environments).

Tasks of a frozen split take their staged row count from its manifest (an id outside
the manifest is an error), so eval ids never depend on the train jitter or on later
tier edits; train ids take their jittered size. The pipeline (generate/pipeline.py)
gets the row count from here and knows no manifest, so the splits, which freeze
tasks with the pipeline, sit above it and nothing climbs back.
"""

from __future__ import annotations

from causal_gym.errors import GenerationError
from causal_gym.generate.draw import plan_task
from causal_gym.generate.pipeline import build_task, calibrated_draw
from causal_gym.namespaces import Namespace
from causal_gym.rng_keys.derive import derive_streams
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scm.model import Scm
from causal_gym.splits.manifest import frozen_rows
from causal_gym.staging.naming import Naming
from causal_gym.task import Task
from causal_gym.task_id import TaskId


def generate_task(
    task_id: TaskId | str, key: DerivationKey, staged_rows: int | None = None
) -> Task:
    """Materialize one task in memory; byte-identical for the same key, id and size.

    `staged_rows` overrides a frozen split's row count (the expert audit draws eval
    ids at other sizes under other keys); it is left out almost always.
    """
    tid = task_id if isinstance(task_id, TaskId) else TaskId.parse(task_id)
    if staged_rows is None and tid.namespace is not Namespace.TRAIN:
        staged_rows = frozen_rows(tid)
    return build_task(tid, key, staged_rows)


def hidden_scm(task: Task, key: DerivationKey) -> tuple[Scm, Naming]:
    """The calibrated SCM and column names a generated task of a linear family came
    from (its accepted attempt, drawn again): what a check of the reward's anchors
    samples fresh rows from. It is the truth: nothing staged or scored reads it."""
    tid = TaskId.parse(task.public.task_id)
    staged_rows = None if tid.namespace is Namespace.TRAIN else frozen_rows(tid)
    plan = plan_task(key, tid, staged_rows)
    attempt = task.hidden.generation_attempts - 1
    drawn = calibrated_draw(plan, derive_streams(key, tid, attempt))
    if drawn is None:
        raise GenerationError(f"{tid}: its accepted candidate no longer calibrates")
    return drawn[0], drawn[1]
