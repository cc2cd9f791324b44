"""derive -> SCM -> name -> sample -> certify -> place -> mess -> stage -> solvability -> Task.

Names come before sampling because a root's documented kind (a count, a 0-10 score)
chooses the marginal it is drawn from; placement after sampling puts every column
computed from parents inside its unit's bounds.

One function, `generate_task`, owns the rejection loop: a candidate that fails the
certificate or the solvability check is redrawn with the attempt counter folded into
every stream, inside the same plan (tier, size, effect class).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from causal_gym.errors import GenerationError
from causal_gym.estimand import Estimand
from causal_gym.generate.solvability import check_solvability
from causal_gym.rng_keys.derive import TaskStreams, derive_streams
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scm.build import build_scm
from causal_gym.scm.certify import certify
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm, Timing
from causal_gym.scm.sample import sample_clean
from causal_gym.scoring.schemas import submission_json_schema
from causal_gym.spec.plan import TaskPlan, plan_task
from causal_gym.spec.tiers import TIER_SPECS
from causal_gym.splits.manifest import eval_v1_rows
from causal_gym.staging.csv_bytes import render_csv
from causal_gym.staging.mess import make_messy, plan_mess
from causal_gym.staging.naming import ColumnSpec, Naming, name_columns
from causal_gym.staging.placement import place_columns
from causal_gym.staging.readme import ReadmeFacts, render_prompt, render_readme
from causal_gym.task import HiddenTruth, PublicTask, Task
from causal_gym.task_id import Namespace, TaskId

MAX_ATTEMPTS = 30
_TIMING_ORDER = {Timing.TREATMENT: 0, Timing.OUTCOME: 1, Timing.PRE: 2, Timing.POST: 3}


@dataclass(frozen=True)
class Rejection:
    attempt: int
    reasons: tuple[str, ...]


def public_column_order(naming: Naming) -> tuple[ColumnSpec, ...]:
    """README order: by timing, then alphabetical, so it can never echo SCM roles."""
    return tuple(sorted(naming.columns.values(), key=lambda c: (_TIMING_ORDER[c.timing], c.name)))


def _names(scm: Scm, naming: Naming) -> dict[str, str]:
    names = {node_id: spec.name for node_id, spec in naming.columns.items()}
    for i, node_id in enumerate(scm.latent_ids, start=1):
        names[node_id] = f"latent_{i}"
    return names


def _candidate(plan: TaskPlan, streams: TaskStreams, attempt: int) -> Task | Rejection:
    spec = TIER_SPECS[plan.tier]
    family = plan.task_id.family
    scm = build_scm(spec, family, plan.effect_class, streams.scm)
    naming = name_columns(scm, streams.naming)
    mess_plan = plan_mess(spec, plan.staged_rows, streams.messiness)
    sample = sample_clean(scm, mess_plan.n_clean, streams.data, naming.marginals)
    certificate = certify(scm, plan.effect_class, sample.propensity, sample.columns[TREATMENT_ID])
    if not certificate.ok:
        return Rejection(attempt, certificate.reasons)

    naming = place_columns(naming, sample)
    messy = make_messy(scm, sample, mess_plan, OUTCOME_ID, streams.messiness)
    csv_bytes = render_csv(messy, naming)
    columns = public_column_order(naming)
    facts = ReadmeFacts(
        family, naming.theme, messy.n_rows, columns, messy.coding, submission_json_schema(family)
    )
    readme = render_readme(facts, streams.prompt)
    prompt = render_prompt(facts, streams.prompt)
    solvable = check_solvability(csv_bytes, readme)
    if not solvable.ok:
        return Rejection(attempt, solvable.reasons)

    names = _names(scm, naming)
    pre = tuple(c.name for c in columns if c.timing is Timing.PRE)
    public = PublicTask(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        n_rows=messy.n_rows,
        files={"data.csv": csv_bytes, "README.md": readme.encode("utf-8")},
        prompt=prompt,
        pre_treatment_columns=pre,
        columns=tuple(c.name for c in columns),
        generation_attempts=attempt + 1,
    )
    hidden = HiddenTruth(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        effect_class=plan.effect_class,
        estimands=MappingProxyType(
            {
                "ate": Estimand(
                    value=certificate.ate,
                    reference_estimate=solvable.fit.estimate,
                    reference_se=solvable.fit.se,
                    reference_width=solvable.reference_width,
                    scale=solvable.scale,
                )
            }
        ),
        treatment=names[TREATMENT_ID],
        outcome=names[OUTCOME_ID],
        pre_treatment=pre,
        post_treatment=tuple(c.name for c in columns if c.timing is Timing.POST),
        latent=tuple(names[i] for i in scm.latent_ids),
        roles={names[n.id]: n.role.value for n in scm.nodes},
        edges=tuple((names[e.parent], names[e.child]) for e in scm.edges),
        generation_attempts=attempt + 1,
    )
    return Task(public, hidden)


def generate_task(
    task_id: TaskId | str, key: DerivationKey, staged_rows: int | None = None
) -> Task:
    """Materialize one task in memory; byte-identical for the same key, id and size.

    eval-v1 tasks take their staged row count from the frozen manifest (ids outside
    it are an error); `staged_rows` overrides that only when freezing the manifest.
    """
    tid = task_id if isinstance(task_id, TaskId) else TaskId.parse(task_id)
    if staged_rows is None and tid.namespace is Namespace.EVAL_V1:
        staged_rows = eval_v1_rows(tid)
    plan = plan_task(key, tid, staged_rows)
    rejections: list[Rejection] = []
    for attempt in range(MAX_ATTEMPTS):
        outcome = _candidate(plan, derive_streams(key, tid, attempt), attempt)
        if isinstance(outcome, Task):
            return outcome
        rejections.append(outcome)
    last = "; ".join(rejections[-1].reasons)
    raise GenerationError(f"{tid}: all {MAX_ATTEMPTS} candidates rejected (last: {last})")
