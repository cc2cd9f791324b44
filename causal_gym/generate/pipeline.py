"""derive -> SCM -> name -> sample -> certify -> place -> mess -> stage -> solvability -> Task.

Names come before sampling because a root's documented kind (a count, a 0-10 score)
chooses the marginal it is drawn from; placement after sampling puts every column
computed from parents inside its unit's bounds.

One function, `build_task`, owns the rejection loop: a candidate that fails the
certificate or the solvability check is redrawn with the attempt counter folded into
every stream, inside the same plan (tier, size, effect class). It knows nothing of
frozen splits: their row counts reach it from its caller (causal_gym.make).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from types import MappingProxyType

from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.designs.candidate import DesignRejection
from causal_gym.errors import GenerationError
from causal_gym.estimand import Estimand
from causal_gym.generate.build import build_scm
from causal_gym.generate.design_task import design_task
from causal_gym.generate.draw import plan_task
from causal_gym.generate.efficiency import anchor_width, efficiency_bound
from causal_gym.generate.ols_anchor import ols_anchor
from causal_gym.generate.real_tier import REAL_POPULATION, source_note, truth_graph
from causal_gym.generate.solvability import (
    Z,
    check_expert_solvability,
    check_multi_solvability,
    check_solvability,
)
from causal_gym.hooks import hooks_of
from causal_gym.plan.effects import effect_prior
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS, Tier
from causal_gym.realdata.tables import real_table
from causal_gym.rng_keys.derive import TaskStreams, derive_streams
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scm.certify import CONFOUNDING_REASON, certify
from causal_gym.scm.expectations import centered
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm, Timing
from causal_gym.scm.sample import CleanSample, sample_clean
from causal_gym.scoring.reward import INTERVAL_SCORE_ALPHA, PROPER_INTERVAL_ALPHA
from causal_gym.staging.csv_bytes import out_of_bounds, render_csv
from causal_gym.staging.mess import MessPlan, MessyFrame, make_messy, merged_coding, plan_mess
from causal_gym.staging.naming import ColumnSpec, Naming, name_columns
from causal_gym.staging.placement import place_columns
from causal_gym.staging.readme import ReadmeFacts, render_prompt, render_readme
from causal_gym.staging.real_naming import name_real_columns
from causal_gym.task import HiddenTruth, PublicTask, Task
from causal_gym.task_id import TaskId
from causal_gym.versions import TASK_ANCHOR_REWARD_VERSION, reward_version

MAX_ATTEMPTS = 30
_TIMING_ORDER = {
    Timing.TREATMENT: 0,
    Timing.OUTCOME: 1,
    Timing.MEDIATOR: 2,
    Timing.PRE: 3,
    Timing.POST: 4,
}


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


@dataclass(frozen=True)
class _Staged:
    """What staging produced: the files, the README facts and the truth estimands."""

    files: dict[str, bytes]
    facts: ReadmeFacts
    estimands: dict[str, Estimand]


def _stage_multi(
    scm: Scm, naming: Naming, messy: MessyFrame, plan: TaskPlan, streams: TaskStreams
) -> _Staged | Rejection:
    """Staging and solvability for the multi-estimand families: the reference of
    reference/estimands.py must work on every staged file, for every estimand."""
    family = plan.task_id.family
    spec = hooks_of(family)
    if out_of_bounds(messy, naming):
        return Rejection(0, ("a staged value lies outside its documented range",))
    files = {"data.csv": render_csv(messy, naming)}
    coding, declared = messy.coding, {}
    if scm.modifier is not None:
        declared["modifier"] = naming.name_of(scm.modifier)
    mediators = [n.id for n in scm.nodes if n.timing is Timing.MEDIATOR]
    if mediators:
        declared["mediator"] = naming.name_of(mediators[0])
    extra = spec.stage_extra(scm, naming, messy.plan, plan, streams)
    if extra is None:
        return Rejection(0, ("a staged value lies outside its documented range",))
    files.update(extra.files)
    if extra.coding is not None:
        coding = merged_coding(coding, extra.coding)
    declared.update(extra.declared)
    facts = ReadmeFacts(
        family,
        spec,
        naming.theme,
        messy.n_rows,
        public_column_order(naming),
        coding,
        submission_json_schema(family),
        declared,
        effect_sizes=effect_prior(plan.effect_class, plan.generator_version).hyperprior,
        source=source_note(plan),
    )
    readme = render_readme(facts, streams.prompt)
    files["README.md"] = readme.encode("utf-8")
    solvable = check_multi_solvability(files)
    if not solvable.ok:
        return Rejection(0, solvable.reasons)
    levels = naming.columns[scm.modifier].levels if scm.modifier is not None else ()
    truths = spec.estimand_values(scm, levels)
    if set(solvable.fits) != set(truths):
        return Rejection(0, ("the reference does not answer every estimand",))
    anchors = None
    if reward_version(plan.task_id.namespace) >= TASK_ANCHOR_REWARD_VERSION:
        anchors = spec.task_anchors(scm, naming.marginals, streams.anchor, solvable.rows, levels)
    estimands = {
        name: Estimand(
            value=truths[name],
            reference_estimate=fit.estimate,
            reference_se=fit.se,
            # version 3: a property of the task at the proper level; before it the
            # reference's own width at the 88% level (scoring/reward.py says why)
            reference_width=2.0 * Z * fit.se if anchors is None else anchors[name],
            scale=solvable.scale,
            interval_alpha=INTERVAL_SCORE_ALPHA if anchors is None else PROPER_INTERVAL_ALPHA,
        )
        for name, fit in solvable.fits.items()
    }
    return _Staged(files, facts, estimands)


def _stage_single(
    scm: Scm,
    naming: Naming,
    messy: MessyFrame,
    plan: TaskPlan,
    streams: TaskStreams,
    ate: float,
) -> _Staged | Rejection:
    """Staging and solvability for the seed's families (one ATE, one file). The reward
    anchor is a property of the task, not the reference's own width: the efficiency
    bound on an expert task (generate/efficiency.py), the optimal valid OLS's width on
    the linear tiers (generate/ols_anchor.py); both score the proper 90% interval."""
    family = plan.task_id.family
    expert = scm.nonlinear is not None
    if expert and out_of_bounds(messy, naming):
        return Rejection(0, ("a staged value lies outside its documented range",))
    csv_bytes = render_csv(messy, naming)
    columns = public_column_order(naming)
    facts = ReadmeFacts(
        family,
        hooks_of(family),
        naming.theme,
        messy.n_rows,
        columns,
        messy.coding,
        submission_json_schema(family),
        nonlinear=expert,
        effect_sizes=effect_prior(plan.effect_class, plan.generator_version).hyperprior,
        source=source_note(plan),
    )
    readme = render_readme(facts, streams.prompt)
    if expert:
        bound = efficiency_bound(scm, naming.marginals, streams.anchor)
        checked = check_expert_solvability(
            csv_bytes, readme, lambda n_used: anchor_width(bound, n_used)
        )
        if not checked.ok:
            return Rejection(0, checked.reasons)
        estimand = Estimand(
            value=ate,
            reference_estimate=None,
            reference_se=None,
            reference_width=checked.width,
            scale=checked.scale,
            interval_alpha=PROPER_INTERVAL_ALPHA,
        )
    else:
        solvable = check_solvability(csv_bytes, readme)
        if not solvable.ok:
            return Rejection(0, solvable.reasons)
        anchor = ols_anchor(scm, naming.marginals, streams.anchor)
        n_used = solvable.fit.n_used
        real = plan.tier is Tier.REAL
        estimand = Estimand(
            value=ate,
            reference_estimate=solvable.fit.estimate,
            reference_se=solvable.fit.se,
            reference_width=anchor.low_width(n_used) if real else anchor.width(n_used),
            scale=solvable.scale,
            interval_alpha=PROPER_INTERVAL_ALPHA,
        )
    files = {"data.csv": csv_bytes, "README.md": readme.encode("utf-8")}
    return _Staged(files, facts, {"ate": estimand})


def draw_scm(plan: TaskPlan, streams: TaskStreams) -> tuple[Scm, Naming]:
    """A candidate's SCM and column names; an expert SCM's terms come back centered by
    their exact means under the roots' marginals, which naming chooses."""
    spec = TIER_SPECS[plan.tier]
    expert = plan.nonlinear
    prior = effect_prior(plan.effect_class, plan.generator_version)
    table = real_table(plan.source) if plan.source is not None else None
    family = plan.task_id.family
    scm = build_scm(spec, family, prior, streams.scm, streams.effect, expert=expert, table=table)
    if table is not None:
        naming = name_real_columns(scm, table, streams.naming)
    else:
        naming = name_columns(scm, streams.naming)
    if scm.nonlinear is not None:
        terms = centered(scm.nonlinear, naming.marginals, scm.real)
        scm = dataclasses.replace(scm, nonlinear=terms)
    return scm, naming


def calibrated_draw(
    plan: TaskPlan, streams: TaskStreams
) -> tuple[Scm, Naming, MessPlan, CleanSample] | None:
    """A candidate's SCM, names, mess plan and clean sample, after the family's
    calibration (obs_vs_rct sets its hidden confounder's strength from a first sample
    and samples again with the same draws); None: the calibration rejects it."""
    scm, naming = draw_scm(plan, streams)
    mess_plan = plan_mess(TIER_SPECS[plan.tier], plan.staged_rows, streams.messiness)
    data = copy.deepcopy(streams.data)  # to sample a calibrated SCM with the same draws
    sample = sample_clean(scm, mess_plan.n_clean, streams.data, naming.marginals)
    calibrated = hooks_of(plan.task_id.family).calibrate(scm, sample, plan, streams)
    if calibrated is None:
        return None
    if calibrated is not scm:
        scm = calibrated
        sample = sample_clean(scm, mess_plan.n_clean, data, naming.marginals)
    return scm, naming, mess_plan, sample


def _candidate(plan: TaskPlan, streams: TaskStreams, attempt: int) -> Task | Rejection:
    family = plan.task_id.family
    shape = hooks_of(family)
    designed = shape.design_candidate(plan, streams)
    if isinstance(designed, DesignRejection):
        return Rejection(attempt, designed.reasons)
    if designed is not None:  # a design family: its own model, the shared build step
        built = design_task(plan, designed, attempt)
        return built if isinstance(built, Task) else Rejection(attempt, built)
    expert = plan.nonlinear
    drawn = calibrated_draw(plan, streams)
    if drawn is None:
        return Rejection(attempt, (CONFOUNDING_REASON,))
    scm, naming, mess_plan, sample = drawn
    certificate = certify(
        scm,
        effect_prior(plan.effect_class, plan.generator_version),
        sample.propensity,
        sample.columns[TREATMENT_ID],
        confounded=shape.hidden_confounder(plan.effect_class)
        if shape.confounding_classes
        else None,
    )
    reasons = certificate.reasons or tuple(shape.certify_sample(scm, sample, plan, streams))
    if expert and scm.nonlinear is None:
        reasons += ("a nonlinear task needs a continuous confounder",)
    if reasons:
        return Rejection(attempt, reasons)

    naming = place_columns(naming, sample)
    messy = make_messy(scm, sample, mess_plan, OUTCOME_ID, streams.messiness)
    if shape.contract.multi_estimand:
        staged = _stage_multi(scm, naming, messy, plan, streams)
    else:
        staged = _stage_single(scm, naming, messy, plan, streams, certificate.ate)
    if isinstance(staged, Rejection):
        return Rejection(attempt, staged.reasons)

    columns = staged.facts.columns
    prompt = render_prompt(staged.facts, streams.prompt)
    names = _names(scm, naming)
    pre = tuple(c.name for c in columns if c.timing is Timing.PRE)
    public = PublicTask(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        n_rows=messy.n_rows,
        files=staged.files,
        prompt=prompt,
        pre_treatment_columns=pre,
        columns=tuple(c.name for c in columns),
        generation_attempts=attempt + 1,
        estimands=tuple(staged.estimands),
        source=plan.source,
    )
    roles, edges = truth_graph(scm, names)
    latent = tuple(names[i] for i in scm.latent_ids)
    if scm.real is not None:
        latent += (REAL_POPULATION,)
    hidden = HiddenTruth(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        effect_class=plan.effect_class,
        estimands=MappingProxyType(staged.estimands),
        treatment=names[TREATMENT_ID],
        outcome=names[OUTCOME_ID],
        pre_treatment=pre,
        post_treatment=tuple(c.name for c in columns if c.timing is Timing.POST),
        latent=latent,
        roles=roles,
        edges=edges,
        generation_attempts=attempt + 1,
    )
    return Task(public, hidden)


def build_task(
    tid: TaskId,
    key: DerivationKey,
    staged_rows: int | None = None,
    generator_version: int | None = None,
) -> Task:
    """One task in memory; byte-identical for the same key, id and size. `staged_rows`
    pins the size (a frozen split's manifest, or freezing one); without it a train id
    takes its jittered size and a frozen-split id its planned one. `generator_version`
    replays an older generator (the audits measure what a version change bought); by
    default the namespace's own."""
    plan = plan_task(key, tid, staged_rows)
    if generator_version is not None:
        plan = dataclasses.replace(plan, generator_version=generator_version)
    rejections: list[Rejection] = []
    for attempt in range(MAX_ATTEMPTS):
        outcome = _candidate(plan, derive_streams(key, tid, attempt), attempt)
        if isinstance(outcome, Task):
            return outcome
        rejections.append(outcome)
    last = "; ".join(rejections[-1].reasons)
    raise GenerationError(f"{tid}: all {MAX_ATTEMPTS} candidates rejected (last: {last})")
