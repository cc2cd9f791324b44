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
from causal_gym.families.rdd.model import Density
from causal_gym.families.rdd.params import EFFECT_RANGE, draw_model, draw_real_model, subtier
from causal_gym.families.rdd.real import real_density, real_rows, real_theme, source_note
from causal_gym.families.rdd.stage import plan_mess, quantize, stage_rows
from causal_gym.families.rdd.themes import DATE_FORMATS, THEMES
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS
from causal_gym.realdata.design_tables import design_table
from causal_gym.rng_keys.derive import TaskStreams
from causal_gym.staging.source_note import SourceNote

#: The certificate: each side needs this many usable rows within the anchor's
#: MSE-optimal bandwidth, or the local fit has too little to stand on.
MIN_ROWS_PER_SIDE = 40


def rows_near_cutoff(u: np.ndarray, bandwidth: float) -> tuple[int, int]:
    """(below, above): rows within `bandwidth` of the cutoff on each side."""
    near = np.abs(u) < bandwidth
    return int(np.sum(near & (u < 0))), int(np.sum(near & (u >= 0)))


class RddHooks(FamilyHooks):
    """The rdd family draws from its own model (families/rdd/model.py); its real tier
    reads a real study's running variable (families/rdd/real.py)."""

    def design_candidate(
        self, plan: TaskPlan, streams: TaskStreams
    ) -> DesignCandidate | DesignRejection | None:
        tier = plan.tier
        if plan.source is not None:
            table = design_table(plan.source)
            theme, cutoff, date_format = real_theme(plan.source), "0", DATE_FORMATS[0]
        else:
            theme = THEMES[int(streams.naming.integers(len(THEMES)))]
            running = theme.running
            cutoff = running.cutoffs[int(streams.naming.integers(len(running.cutoffs)))]
            date_format = DATE_FORMATS[int(streams.naming.integers(len(DATE_FORMATS)))]
        mess = plan_mess(TIER_SPECS[tier], plan.staged_rows, streams.messiness)
        scale = theme.outcome.scale
        bound = effect_bound(EFFECT_RANGE, scale)
        # the curvature's size follows the rows a fuzzy analysis could use (the fewer)
        n_fuzzy = int(mess.usable(False).sum())
        if plan.source is not None:
            model = draw_real_model(streams.scm, n_fuzzy, bound / scale, real_density(plan.source))
        else:
            model = draw_model(tier, streams.scm, n_fuzzy, bound / scale)
        usable = mess.usable(model.sharp)
        anchor = anchor_width(model, int(usable.sum()))
        if plan.source is not None:
            rows = real_rows(table, mess.n_clean, streams.data)
            k, u, cells, docs = rows.u, rows.u, rows.cells, rows.docs
            source: SourceNote | None = source_note(table)
        else:
            assert isinstance(model.density, Density)  # (a simulated tier's)
            k, u = quantize(model.density.sample(mess.n_clean, streams.data), theme.running)
            cells, docs, source = None, (), None
        d, y = model.draw(u, streams.data)
        below, above = rows_near_cutoff(u[usable], anchor.bandwidth)
        if min(below, above) < MIN_ROWS_PER_SIDE:
            return DesignRejection(
                (f"{below} and {above} usable rows near the cutoff (fewer than "
                 f"{MIN_ROWS_PER_SIDE} on a side)",)
            )  # fmt: skip
        # r after the certificate: a rejected draw need not pay for the limit experiment
        r = normal_anchor(model.truth, anchor.width / (2.0 * Z90), bound / scale, streams.anchor)
        staged = stage_rows(
            k, d, y, theme, cutoff, date_format, mess, streams.messiness, real=cells
        )
        words = dictionary(
            theme, model.sharp, cutoff, date_format, mess, staged.columns, bound,
            streams.prompt, real=docs, source=source,
        )  # fmt: skip
        x, t, o = theme.running.name, theme.treatment[0], theme.outcome.name
        roles = {x: "running_variable", t: "treatment", o: "outcome"}
        roles.update({doc.name: "pre_treatment" for doc in docs})
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
            roles=roles,
            edges=((x, t), (x, o), (t, o)),
        )
