"""obs_vs_rct's second staged file: a randomized trial from the same SCM.

Its own size, sample and messiness come from the task's `trial` stream, so adding it
moved no other stream's draws; it keeps the extract's treatment codes, and the
README lists the union of both files' spellings.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from causal_gym.families.obs_vs_rct.contract import TRIAL_SHARE
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS
from causal_gym.scm.model import OUTCOME_ID, Scm
from causal_gym.scm.sample import sample_clean
from causal_gym.staging.csv_bytes import out_of_bounds, render_csv
from causal_gym.staging.mess import MessPlan, TreatmentCoding, make_messy, plan_mess
from causal_gym.staging.naming import Naming


def trial_csv(
    scm: Scm, naming: Naming, mess_plan: MessPlan, plan: TaskPlan, rng: np.random.Generator
) -> tuple[bytes, TreatmentCoding, int] | None:
    """obs_vs_rct's randomized trial: same SCM, treatment by a fair coin, its own
    sample and messiness from the `trial` stream, the extract's treatment codes (None
    when a value falls outside its documented range)."""
    share = float(rng.uniform(*TRIAL_SHARE))
    spec = TIER_SPECS[plan.tier]
    own = plan_mess(spec, max(200, round(plan.staged_rows * share)), rng)
    trial_plan = dataclasses.replace(
        own, primary=mess_plan.primary, alternative=mess_plan.alternative
    )
    sample = sample_clean(scm, trial_plan.n_clean, rng, naming.marginals, randomized=True)
    messy = make_messy(scm, sample, trial_plan, OUTCOME_ID, rng)
    if out_of_bounds(messy, naming):
        return None
    return render_csv(messy, naming), messy.coding, messy.n_rows
