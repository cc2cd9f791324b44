"""Identification certificate: the promises the README makes, checked on the SCM.

A candidate that fails any check is rejected and redrawn; the reasons are kept so a
generator change that starts rejecting everything is easy to diagnose. They name the
check, never a value of the hidden SCM (no effect size, no effect class): a reason can
end up in an error message, and messages leave the head.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from causal_gym.plan.effects import EffectPrior
from causal_gym.plan.task_plan import EffectClass
from causal_gym.scm.identification import satisfies_backdoor
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Scm, Timing

#: At most this share of rows may sit on the clipped edge of the propensity band.
MAX_CLIPPED_SHARE = 0.10
#: The one rejection reason of obs_vs_rct's confounding promise, whichever its class.
CONFOUNDING_REASON = "the extract's confounding certificate failed"
#: Both arms must hold at least this share of the clean sample.
MIN_ARM_SHARE = 0.10


@dataclass(frozen=True)
class Certificate:
    ate: float
    reasons: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.reasons


def certify(
    scm: Scm,
    prior: EffectPrior,
    propensity: np.ndarray,
    treatment: np.ndarray,
    confounded: bool | None = None,
) -> Certificate:
    """`confounded` (obs_vs_rct only: True or False by its effect class) says whether
    the declared set must fail the backdoor criterion, through a latent parent of the
    treatment, or pass it. Either way a failure gives the one reason
    CONFOUNDING_REASON, so a rejection cannot tell which class the task is in."""
    reasons: list[str] = []
    graph = scm.graph
    declared = scm.pre_treatment_ids
    blocked = satisfies_backdoor(graph, TREATMENT_ID, OUTCOME_ID, declared)
    latent_parent = any(
        scm.node(p).timing is Timing.LATENT for p in graph.predecessors(TREATMENT_ID)
    )
    if confounded is not None:
        # A confounded extract's backdoor runs through a latent parent of T; an
        # unconfounded one may have a latent parent too (generator 3 gives it one that
        # causes T alone), as long as the declared set blocks every backdoor path.
        if blocked == confounded or (confounded and not latent_parent):
            reasons.append(CONFOUNDING_REASON)
    else:
        if not blocked:
            reasons.append("declared pre-treatment set fails the backdoor criterion")
        if latent_parent:
            reasons.append("treatment has a latent parent")

    low, high = scm.propensity_band
    clipped = float(np.mean((propensity <= low) | (propensity >= high)))
    if not (np.all(propensity >= low) and np.all(propensity <= high)):
        reasons.append("propensity outside the positivity band")
    if clipped > MAX_CLIPPED_SHARE:
        reasons.append(f"more than {MAX_CLIPPED_SHARE:.0%} of propensities clipped")
    treated_share = float(np.mean(treatment))
    if not MIN_ARM_SHARE <= treated_share <= 1 - MIN_ARM_SHARE:
        reasons.append(f"an arm holds less than {MIN_ARM_SHARE:.0%} of the sample")

    ate = scm.total_effect()
    if not np.isfinite(ate):
        reasons.append("true ATE is not finite")
    has_path = nx.has_path(graph, TREATMENT_ID, OUTCOME_ID)
    planned_path = prior.effect is not EffectClass.STRUCTURAL_NULL
    if has_path != planned_path or not prior.admits(float(ate)):
        reasons.append("the effect is not the planned one")
    return Certificate(ate=float(ate), reasons=tuple(reasons))
