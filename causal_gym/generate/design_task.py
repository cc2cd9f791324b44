"""The shared build step of the design families: candidate -> README -> reference on
the staged bytes -> Task.

A design family's hooks draw and stage a candidate from their own model
(designs/candidate.py); this step does what every family's task needs the same way:
the README in the one design layout with the submission schema, the prompt, the
reference analysis run on exactly the bytes the agent will see (solvability: it must
answer with a finite interval of useful width, judged without looking at the truth),
and the sealed truth with its reward anchor.

The anchor r is the candidate's, a property of the model at the task's size, never of
the staged sample; the loss is divided by the observable scale, the outcome's standard
deviation on the rows the reference used, floored at ANCHOR_SCALE times r so that a
task whose honest interval is wide next to the outcome's spread (a weak instrument)
still pays an honest answer a bounded loss.
"""

from __future__ import annotations

from types import MappingProxyType

from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.designs.candidate import DesignCandidate
from causal_gym.designs.readme import render_design_prompt, render_design_readme
from causal_gym.estimand import Estimand
from causal_gym.generate.solvability import MAX_WIDTH_TO_SCALE
from causal_gym.plan.task_plan import EffectClass, TaskPlan
from causal_gym.reference.designs import DesignReadmeError, design_fit
from causal_gym.scoring.reward import PROPER_INTERVAL_ALPHA
from causal_gym.task import HiddenTruth, PublicTask, Task

#: The loss's scale is at least this many anchor widths: a weak design's honest loss,
#: a couple of r, stays a bounded share of it. Ten puts the honest reward of every
#: design family inside the audits' band (0.75-0.90) now that iv's and rdd's r is a
#: low quantile of the posterior's width (the design audit measured rdd at 0.717 with
#: eight).
ANCHOR_SCALE = 10.0
#: The reference must keep at least this many rows of data.csv.
MIN_USED_ROWS = 100


def design_task(plan: TaskPlan, candidate: DesignCandidate, attempt: int) -> Task | tuple[str, ...]:
    """The finished task, or the reasons the candidate is redrawn."""
    family = plan.task_id.family
    dictionary = candidate.dictionary
    readme = render_design_readme(family.value, dictionary, submission_json_schema(family))
    files = {"data.csv": candidate.data_csv, "README.md": readme.encode("utf-8")}
    try:
        fit = design_fit(files)
    except (DesignReadmeError, ValueError, ArithmeticError) as exc:
        return (f"the design reference failed on the staged bytes: {exc}",)
    r = candidate.anchor_width
    scale = max(fit.scale, ANCHOR_SCALE * r)
    if not fit.finite or not r > 0:
        return ("the design reference's interval is not finite",)
    if fit.n_used < MIN_USED_ROWS:
        return (f"the design reference kept {fit.n_used} rows (fewer than {MIN_USED_ROWS})",)
    if fit.width / scale > MAX_WIDTH_TO_SCALE:
        return (f"the design reference's width / scale exceeds {MAX_WIDTH_TO_SCALE}",)
    estimand = Estimand(
        value=candidate.truth,
        reference_estimate=fit.estimate,
        reference_se=fit.se,
        reference_width=r,
        scale=scale,
        interval_alpha=PROPER_INTERVAL_ALPHA,
    )
    columns = tuple(c.name for c in dictionary.columns)
    public = PublicTask(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        n_rows=candidate.n_rows,
        files=files,
        prompt=render_design_prompt(dictionary, candidate.estimand),
        pre_treatment_columns=(),
        columns=columns,
        generation_attempts=attempt + 1,
        estimands=(candidate.estimand,),
        source=plan.source,
    )
    hidden = HiddenTruth(
        task_id=str(plan.task_id),
        family=family,
        tier=plan.tier,
        effect_class=EffectClass.STANDARD,
        estimands=MappingProxyType({candidate.estimand: estimand}),
        treatment=candidate.treatment,
        outcome=candidate.outcome,
        pre_treatment=(),
        post_treatment=(),
        latent=candidate.latent,
        roles=MappingProxyType(dict(candidate.roles)),
        edges=candidate.edges,
        generation_attempts=attempt + 1,
        subtier=candidate.subtier,
    )
    return Task(public, hidden)
