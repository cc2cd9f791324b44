"""How `rdd` tasks are drawn: a theme, its cutoff and date format (naming stream), the
mess (messiness), the model with the tier's curvature, density and design (scm), the
clean sample (data), the certificate on the rows near the cutoff, the staged bytes
and README words (messiness, prompt), and, sealed, the exact truth and the anchor r.

The truth is the model's `effect` parameter, which is exactly the jump ratio at the
cutoff (model.py), drawn uniformly on the README's disclosed effect range. The robust
bias-corrected estimator's SD at the MSE-optimal bandwidth comes from the model's
density and conditional moments (anchor.py), at n = the clean rows an analysis can
use (fixed by the mess before any value is drawn); the reference is the posterior
under the range with that estimator's likelihood, and r the 5% quantile of its 90%
width (designs/effect_range.py). Both are in model units and scaled to the outcome's
units here.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.candidate import DesignCandidate, DesignRejection
from causal_gym.designs.effect_range import effect_bound, normal_anchor
from causal_gym.families.rdd.anchor import Z90, anchor_width
from causal_gym.families.rdd.dictionary import FUZZY, SHARP, dictionary
from causal_gym.families.rdd.params import EFFECT_RANGE, draw_model, subtier
from causal_gym.families.rdd.stage import plan_mess, quantize, stage_rows
from causal_gym.families.rdd.themes import DATE_FORMATS, THEMES
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS
from causal_gym.rng_keys.derive import TaskStreams

#: The certificate: each side needs this many usable rows within the anchor's
#: MSE-optimal bandwidth, or the local fit has too little to stand on.
MIN_ROWS_PER_SIDE = 40


def rows_near_cutoff(u: np.ndarray, bandwidth: float) -> tuple[int, int]:
    """(below, above): rows within `bandwidth` of the cutoff on each side."""
    near = np.abs(u) < bandwidth
    return int(np.sum(near & (u < 0))), int(np.sum(near & (u >= 0)))


class RddHooks(FamilyHooks):
    """The rdd family draws from its own model (families/rdd/model.py)."""

    def design_candidate(
        self, plan: TaskPlan, streams: TaskStreams
    ) -> DesignCandidate | DesignRejection | None:
        tier = plan.tier
        theme = THEMES[int(streams.naming.integers(len(THEMES)))]
        running = theme.running
        cutoff = running.cutoffs[int(streams.naming.integers(len(running.cutoffs)))]
        date_format = DATE_FORMATS[int(streams.naming.integers(len(DATE_FORMATS)))]
        mess = plan_mess(TIER_SPECS[tier], plan.staged_rows, streams.messiness)
        scale = theme.outcome.scale
        bound = effect_bound(EFFECT_RANGE, scale)
        # the curvature's size follows the rows a fuzzy analysis could use (the fewer)
        model = draw_model(tier, streams.scm, int(mess.usable(False).sum()), bound / scale)
        usable = mess.usable(model.sharp)
        anchor = anchor_width(model, int(usable.sum()))
        k, u = quantize(model.density.sample(mess.n_clean, streams.data), running)
        d, y = model.draw(u, streams.data)
        below, above = rows_near_cutoff(u[usable], anchor.bandwidth)
        if min(below, above) < MIN_ROWS_PER_SIDE:
            return DesignRejection(
                (f"{below} and {above} usable rows near the cutoff (fewer than "
                 f"{MIN_ROWS_PER_SIDE} on a side)",)
            )  # fmt: skip
        # r after the certificate: a rejected draw need not pay for the limit experiment
        r = normal_anchor(model.truth, anchor.width / (2.0 * Z90), bound / scale, streams.anchor)
        staged = stage_rows(k, d, y, theme, cutoff, date_format, mess, streams.messiness)
        words = dictionary(
            theme, model.sharp, cutoff, date_format, mess, staged.columns, bound, streams.prompt
        )
        x, t, o = running.name, theme.treatment[0], theme.outcome.name
        return DesignCandidate(
            data_csv=staged.data_csv,
            dictionary=words,
            estimand=SHARP if model.sharp else FUZZY,
            truth=scale * model.truth,
            anchor_width=scale * r,
            subtier=subtier(tier, model),
            treatment=t,
            outcome=o,
            n_rows=plan.staged_rows,
            roles={x: "running_variable", t: "treatment", o: "outcome"},
            edges=((x, t), (x, o), (t, o)),
        )
