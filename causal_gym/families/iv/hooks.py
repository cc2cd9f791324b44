"""How `iv` tasks are drawn: a theme and its covariates (naming stream), the mess
(messiness), the model with the tier's instrument strength (scm), the clean sample
(data), the certificate on its first-stage F, the staged bytes and README words
(messiness, prompt), and, sealed, the exact truth and the anchor r (anchor).

r is the 5% quantile of the reference's 90% posterior width over the task's samples,
from the model's reduced form (anchor.py), for n the rows an analysis can use (the
clean rows with no blank cell, fixed by the mess before any value is drawn).
"""

from __future__ import annotations

from causal_gym.designs.candidate import DesignCandidate, DesignRejection
from causal_gym.families.iv.anchor import anchor_width
from causal_gym.families.iv.dictionary import dictionary
from causal_gym.families.iv.draw import COVARIATES, F_BANDS, LATE_SHARE, draw_model
from causal_gym.families.iv.model import first_stage_f
from causal_gym.families.iv.stage import plan_mess, stage_rows
from causal_gym.families.iv.themes import THEMES
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS, Tier
from causal_gym.rng_keys.derive import TaskStreams

Z90 = 1.6448536269514722
#: The latent confounder's name in `inspect --reveal`.
LATENT = "unrecorded_motivation"


def subtier(tier: Tier) -> str:
    """The hidden difficulty cell: how strong the instrument is."""
    return "weak_instrument" if tier is Tier.HARD else "strong_instrument"


class IvHooks(FamilyHooks):
    """The iv family draws from its own model (families/iv/model.py)."""

    def design_candidate(
        self, plan: TaskPlan, streams: TaskStreams
    ) -> DesignCandidate | DesignRejection | None:
        tier = plan.tier
        k = int(streams.scm.integers(COVARIATES[tier][0], COVARIATES[tier][1] + 1))
        theme = THEMES[int(streams.naming.integers(len(THEMES)))]
        picked = sorted(streams.naming.permutation(len(theme.covariates))[:k])
        covariates = tuple(theme.covariates[int(i)] for i in picked)
        late = theme.binary and bool(streams.scm.random() < LATE_SHARE)
        estimand = "late" if late else "ate"
        mess = plan_mess(TIER_SPECS[tier], plan.staged_rows, k, streams.messiness)
        scale = theme.outcome.scale
        model, bound = draw_model(
            tier, k, theme.binary, late, mess.n_clean, scale, streams.scm, plan.generator_version
        )
        clean = model.draw(streams.data, mess.n_clean)
        if tier in F_BANDS:  # the weak tier is certified on its model (draw.py)
            low, high = F_BANDS[tier]
            if not low <= first_stage_f(clean) <= high:
                reason = f"the first-stage F is outside the tier's [{low}, {high}]"
                return DesignRejection((reason,))
        staged = stage_rows(clean, theme, covariates, mess, streams.messiness)
        words = dictionary(theme, estimand, covariates, mess, staged.columns, bound, streams.prompt)
        anchor = anchor_width(model, bound / scale, mess.n_complete, streams.anchor)
        names = (theme.instrument[0], theme.treatment[0], theme.outcome.name)
        z, d, y = names
        covariate_names = tuple(m.name for m in covariates)
        roles = {z: "instrument", d: "treatment", y: "outcome", LATENT: "unobserved_confounder"}
        roles.update({c: "confounder" for c in covariate_names})
        edges = [(z, d), (d, y), (LATENT, d), (LATENT, y)]
        edges += [(c, target) for c in covariate_names for target in (d, y)]
        return DesignCandidate(
            data_csv=staged.data_csv,
            dictionary=words,
            estimand=estimand,
            truth=scale * model.truth(),
            anchor_width=scale * anchor,
            subtier=subtier(tier),
            treatment=d,
            outcome=y,
            n_rows=plan.staged_rows,
            latent=(LATENT,),
            roles=roles,
            edges=tuple(edges),
        )
