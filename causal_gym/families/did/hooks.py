"""How `did` tasks are drawn: a theme, its date formats and first period (naming
stream), the panel model with the tier's cohorts and effect dynamics (scm), the mess
from the panel's shape alone (messiness), the certificate on the design, the outcomes
(data), the staged bytes and README words (messiness, prompt), and, sealed, the exact
truth and the anchor r.

Both come from the design and the model, never the sample. The usable unit-periods
(a row with its date and outcome) are fixed by the mess before any outcome is drawn,
so the treated ones among them are known: the truth is the model's exact average
effect over them (model.PanelModel.att). The imputation estimator is linear in the
outcomes with weights omega that depend on the design alone
(reference/design_did_fe.imputation_weights), so its exact variance under the model's
AR(1) errors is sum_i omega_i' Sigma_i omega_i (model.PanelModel.estimator_sd), and
r = 2 z90 times its square root, in the outcome's units.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.candidate import ColumnDoc, DesignCandidate, DesignRejection
from causal_gym.families.did.dictionary import ESTIMAND, dictionary
from causal_gym.families.did.draw import draw_model, draw_real_model
from causal_gym.families.did.model import PanelModel
from causal_gym.families.did.real import choose_states, real_theme, source_note
from causal_gym.families.did.stage import Dates, Mess, plan_mess, stage_rows
from causal_gym.families.did.themes import THEMES, Theme
from causal_gym.hooks import FamilyHooks
from causal_gym.plan.task_plan import TaskPlan
from causal_gym.plan.tiers import TIER_SPECS
from causal_gym.realdata.design_tables import design_table
from causal_gym.reference.design_did_fe import Cells, imputation_weights
from causal_gym.rng_keys.derive import TaskStreams

Z90 = 1.6448536269514722
#: The first period's year is drawn from this range (inclusive).
FIRST_YEARS = (2012, 2019)


def draw_dates(theme: Theme, rng: np.random.Generator) -> Dates:
    """The panel's first period and the two formats its dates are written in."""
    calendar = theme.calendar
    year = int(rng.integers(FIRST_YEARS[0], FIRST_YEARS[1] + 1))
    within = int(rng.integers(calendar.season))
    usual, other = (calendar.formats[int(k)][0] for k in rng.permutation(len(calendar.formats))[:2])
    return Dates(year * calendar.season + within, usual, other)


def design_weights(
    model: PanelModel, mess: Mess
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """(unit, period, treated, omega, complete) of the usable unit-periods: the
    imputation estimator's weights, and whether it averages every treated one (each
    treated unit and period also has an untreated usable cell)."""
    unit, period = (np.asarray(a, dtype=np.int64) for a in np.nonzero(mess.usable))
    treated = model.treated(unit, period)
    cells = Cells(unit, period, model.n_units, model.n_periods)
    omega, target = imputation_weights(cells, treated)
    return unit, period, treated, omega, bool(np.array_equal(target, treated))


class DidHooks(FamilyHooks):
    """The did family draws from its own model (families/did/model.py)."""

    def design_candidate(
        self, plan: TaskPlan, streams: TaskStreams
    ) -> DesignCandidate | DesignRejection | None:
        real, source = None, None
        docs: tuple[ColumnDoc, ...] = ()
        if plan.source is not None:  # the real tier: a study's panel (families/did/real.py)
            table, theme = design_table(plan.source), real_theme(plan.source)
            panel = choose_states(table, plan.staged_rows, streams.scm)
            usual, other = (f for f, _ in theme.calendar.formats)
            dates = Dates(panel.first_year, usual, other)
            model = draw_real_model(panel, theme.calendar.season, streams.scm)
            real, docs, source = (panel.ids, panel.cells), panel.docs, source_note(table)
        else:
            theme = THEMES[int(streams.naming.integers(len(THEMES)))]
            dates = draw_dates(theme, streams.naming)
            model = draw_model(plan, theme.calendar.season, streams.scm)
        mess = plan_mess(TIER_SPECS[plan.tier], model.n_units, model.n_periods, streams.messiness)
        unit, period, treated, omega, complete = design_weights(model, mess)
        if not complete or not treated.any():
            return DesignRejection(
                ("a treated unit-period has no untreated cell of its unit or period to impute",)
            )
        truth = model.att(unit, period)
        sd = model.estimator_sd(unit, period, omega)
        y = model.sample(streams.data)
        staged = stage_rows(
            y, model.adoption, model.never, theme, dates, mess, streams.messiness, real=real
        )
        never = bool(model.never.any())
        words = dictionary(
            theme, dates, mess, never, staged.columns, streams.prompt, real=docs, source=source
        )
        d, o, t = theme.adoption_column, theme.outcome, theme.calendar.noun
        return DesignCandidate(
            data_csv=staged.data_csv,
            dictionary=words,
            estimand=ESTIMAND,
            truth=theme.scale * truth,
            anchor_width=2.0 * Z90 * theme.scale * sd,
            subtier=model.subtier,
            treatment=d,
            outcome=o,
            n_rows=plan.staged_rows,
            roles={
                theme.id_column: "unit",
                t: "period",
                d: "treatment",
                o: "outcome",
                **(
                    {doc.name: "pre_treatment" for doc in docs}
                    or {theme.attribute: "unit_attribute"}
                ),
            },
            edges=((d, o), (t, o), (theme.id_column, o)),
        )
