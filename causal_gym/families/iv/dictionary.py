"""The iv README's words: title, intro, question, the Design facts the reference kit
reads back (reference/design_iv.py), the identification assumptions, the column
table and the Data notes that declare every kind of mess.

Worded from the `prompt` stream; it sees the theme, the covariates chosen, the
estimand's name and the mess, never the model's draw: nothing here can carry the
truth, the instrument's strength or the tier's subtier.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.candidate import ColumnDoc, DesignDictionary
from causal_gym.designs.effect_range import range_fact
from causal_gym.designs.spelling import missing_fact, pick
from causal_gym.families.iv.stage import Mess
from causal_gym.families.iv.themes import Measure, Theme


def _question(theme: Theme, estimand: str, rng: np.random.Generator) -> str:
    d, y = f"`{theme.treatment[0]}`", f"`{theme.outcome.name}`"
    if estimand == "late":
        lead = pick(("What is", "Estimate"), rng)
        return (
            f"{lead} the average effect of {d} on {y} among compliers, the {theme.units} who "
            f"would {theme.take} if {theme.switched_on} and would not otherwise (the local "
            f"average treatment effect, LATE), in the units of {y}{'?' if lead[0] == 'W' else '.'}"
        )
    if theme.binary:
        return (
            f"What is the effect of {d} on {y}? The effect is the same for every {theme.unit}, "
            f"so this is the average treatment effect (ATE), in the units of {y}."
        )
    return (
        f"What is the effect of one more session ({d} up by 1) on {y}? Each session changes "
        f"{y} by the same amount for every {theme.unit}, so the average treatment effect "
        f"(ATE) is that per-session effect, in the units of {y}."
    )


def _codes_fact(mess: Mess) -> str:
    (one, zero), (alt_one, alt_zero) = mess.codes
    return f'"{one}", "{alt_one}" mean 1; "{zero}", "{alt_zero}" mean 0'


def _range_fact(theme: Theme, bound: float) -> str:
    return range_fact(theme.outcome.name, bound, "" if theme.binary else " per session")


def design_facts(
    theme: Theme, estimand: str, covariates: tuple[Measure, ...], mess: Mess, bound: float
) -> tuple[tuple[str, str], ...]:
    """The Design section: the keys reference/design_iv.py reads. The effect range is
    the prior the truth is drawn from (draw.py), disclosed whole."""
    listed = ", ".join(f"`{m.name}`" for m in covariates) or "none"
    facts = [
        ("Family", "iv"),
        ("Estimand", estimand),
        ("Treatment", f"`{theme.treatment[0]}`"),
        ("Treatment type", "binary (0/1)" if theme.binary else "count"),
        ("Outcome", f"`{theme.outcome.name}`"),
        ("Instrument", f"`{theme.instrument[0]}`"),
        ("Instrument type", "binary (0/1)" if theme.binary else "continuous (km)"),
        ("Covariates", listed),
        ("Unit id", f"`{theme.id_name}`"),
        ("Effects", "vary across units" if estimand == "late" else "the same for every unit"),
        ("Effect range", _range_fact(theme, bound)),
        ("Missing values", missing_fact(mess.tokens)),
    ]
    if theme.binary:
        facts.insert(-1, ("Binary codes", _codes_fact(mess)))
    return tuple(facts)


def assumptions(theme: Theme, estimand: str) -> tuple[str, ...]:
    """The identification contract: independence, exclusion, relevance, monotonicity
    for a binary treatment, and constant effects where the estimand is the ATE."""
    lines = [
        f"Independence: {theme.independence}",
        theme.exclusion,
        f"Relevance: `{theme.instrument[0]}` moves `{theme.treatment[0]}`.",
    ]
    if theme.binary:
        lines.append(theme.monotonicity)
    if estimand == "ate":
        lines.append(
            f"Constant effects: the effect of `{theme.treatment[0]}` on `{theme.outcome.name}` "
            f"is the same for every {theme.unit}."
        )
    lines.append(f"Unobserved confounding: {theme.confounding}")
    lines.append(
        "The covariates were recorded before the instrument was assigned; they are not "
        "affected by it."
    )
    return tuple(lines)


def columns(
    theme: Theme, covariates: tuple[Measure, ...], order: tuple[str, ...]
) -> tuple[ColumnDoc, ...]:
    """The column table, in data.csv's order."""
    kind = "binary" if theme.binary else "numeric"
    docs = {
        theme.id_name: ColumnDoc(theme.id_name, "id", f"Identifier of the {theme.unit}."),
        theme.instrument[0]: ColumnDoc(theme.instrument[0], kind, theme.instrument[1]),
        theme.treatment[0]: ColumnDoc(theme.treatment[0], kind, theme.treatment[1]),
        theme.outcome.name: ColumnDoc(theme.outcome.name, "numeric", theme.outcome.description),
    }
    for measure in covariates:
        docs[measure.name] = ColumnDoc(measure.name, "numeric", measure.description)
    return tuple(docs[name] for name in order)


def notes(theme: Theme, covariates: tuple[Measure, ...], mess: Mess) -> tuple[str, ...]:
    """The Data notes: each kind of mess the extract has, declared."""
    lines = [
        f"Blank cells are written as {missing_fact(mess.tokens)}; which cells are blank is "
        "unrelated to any value (missing completely at random).",
        f"Some records were sent twice: exact duplicate rows (same `{theme.id_name}`) are one "
        f"{theme.unit}, not two.",
        "Some cells carry stray spaces before or after the value.",
    ]
    if any(m.loc + 4 * m.scale >= 1000 for m in (*covariates, theme.outcome)):
        lines.append(
            "Amounts of 1,000 or more are sometimes written with a thousands separator (1,234)."
        )
    if theme.binary:
        (one, zero), (alt_one, alt_zero) = mess.codes
        lines.append(
            f"The 0/1 columns are written `{one}`/`{zero}`, in some rows `{alt_one}`/`{alt_zero}`."
        )
    lines.append("Row order and column order carry no information.")
    return tuple(lines)


def dictionary(
    theme: Theme,
    estimand: str,
    covariates: tuple[Measure, ...],
    mess: Mess,
    order: tuple[str, ...],
    bound: float,
    rng: np.random.Generator,
) -> DesignDictionary:
    """The task's README words (`rng`: the prompt stream; `bound`: the disclosed
    effect range's half-width)."""
    return DesignDictionary(
        title=pick(theme.titles, rng),
        intro=pick(theme.intros, rng),
        question=_question(theme, estimand, rng),
        design=design_facts(theme, estimand, covariates, mess, bound),
        assumptions=assumptions(theme, estimand),
        columns=columns(theme, covariates, order),
        notes=notes(theme, covariates, mess),
    )
