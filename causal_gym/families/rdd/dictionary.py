"""The rdd README's words: title, intro, question, the Design facts the reference kit
reads back (reference/design_rdd.py), the identification assumptions, the column table
and the Data notes that declare every kind of mess.

Worded from the `prompt` stream; it sees the theme, the cutoff and date format chosen,
whether the design is sharp or fuzzy (a public fact of the design) and the mess, never
the model's draw: nothing here can carry the truth or the curvature that sets the
tier's subtier.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.candidate import ColumnDoc, DesignDictionary
from causal_gym.designs.effect_range import range_fact
from causal_gym.designs.spelling import missing_fact, pick
from causal_gym.families.rdd.stage import Mess, written_cutoff
from causal_gym.families.rdd.themes import Theme
from causal_gym.staging.source_note import SourceNote

SHARP, FUZZY = "effect_at_cutoff", "complier_effect_at_cutoff"


def _side(theme: Theme) -> str:
    running = theme.running
    if running.is_date:
        return "on or after the cutoff" if running.eligible_above else "on or before the cutoff"
    return "at or above the cutoff" if running.eligible_above else "at or below the cutoff"


def _question(theme: Theme, sharp: bool, rng: np.random.Generator) -> str:
    d, y, x = (f"`{theme.treatment[0]}`", f"`{theme.outcome.name}`", f"`{theme.running.name}`")
    lead = pick(("What is", "Estimate"), rng)
    end = "?" if lead == "What is" else "."
    if sharp:
        return (
            f"{lead} the effect of {d} on {y} for {theme.units} exactly at the cutoff of {x} "
            f"(the jump in the mean of {y} at the cutoff), in the units of {y}{end}"
        )
    return (
        f"{lead} the effect of {d} on {y} among compliers at the cutoff of {x}, the "
        f"{theme.units} there whose {d} follows their side of the cutoff (the jump in the "
        f"mean of {y} over the jump in the share treated), in the units of {y}{end}"
    )


def _coding_fact(mess: Mess) -> str:
    (one, zero), (alt_one, alt_zero) = mess.codes
    return f"treated: `{one}`, `{alt_one}`; untreated: `{zero}`, `{alt_zero}`"


def _format_fact(theme: Theme, date_format: str) -> str:
    running = theme.running
    if running.is_date:
        return f"a date written as `{date_format}`, measured in days"
    return f"a number ({running.unit_word})"


def _cutoff_note(theme: Theme) -> str:
    if theme.running.is_date:
        return "the first eligible date" if theme.running.eligible_above else "the last one"
    return theme.running.unit_word


def design_facts(
    theme: Theme, sharp: bool, cutoff: str, date_format: str, mess: Mess, bound: float
) -> tuple[tuple[str, str], ...]:
    """The Design section: the keys reference/design_rdd.py reads, the disclosed effect
    range (the prior the truth is drawn from) among them."""
    written = written_cutoff(theme.running, cutoff, date_format)
    return (
        ("Family", "rdd"),
        ("Estimand", SHARP if sharp else FUZZY),
        ("Design", "sharp" if sharp else "fuzzy"),
        ("Running variable", f"`{theme.running.name}`"),
        ("Running variable format", _format_fact(theme, date_format)),
        ("Cutoff", f"{written} ({_cutoff_note(theme)})"),
        ("Eligible side", _side(theme)),
        ("Treatment", f"`{theme.treatment[0]}`"),
        ("Treatment coding", _coding_fact(mess)),
        ("Outcome", f"`{theme.outcome.name}`"),
        ("Unit id", f"`{theme.id_name}`"),
        ("Effect range", range_fact(theme.outcome.name, bound)),
        ("Missing values", missing_fact(mess.tokens)),
    )


def assumptions(theme: Theme, sharp: bool) -> tuple[str, ...]:
    """The identification contract: continuity at the cutoff and no manipulation; in a
    fuzzy design also monotonicity and exclusion."""
    x, y, d = theme.running.name, theme.outcome.name, theme.treatment[0]
    rule = theme.sharp_rule if sharp else theme.fuzzy_rule
    lines = [
        f"Assignment: {rule}.",
        f"Continuity: the mean of `{y}` that {theme.units} would have without `{d}` changes "
        f"smoothly with `{x}` through the cutoff; it has no jump there.",
        f"No manipulation: {theme.manipulation}",
    ]
    if not sharp:
        lines.append(
            f"Monotonicity: being on the eligible side never makes a {theme.unit} less likely "
            f"to be treated (no {theme.unit} is treated only when ineligible)."
        )
        lines.append(f"Exclusion: {theme.exclusion}")
    return tuple(lines)


def columns(
    theme: Theme, order: tuple[str, ...], real: tuple[ColumnDoc, ...] = ()
) -> tuple[ColumnDoc, ...]:
    """The column table, in data.csv's order (`real`: a real table's other columns)."""
    running = theme.running
    docs = {doc.name: doc for doc in real} | {
        theme.id_name: ColumnDoc(theme.id_name, "id", f"Identifier of the {theme.unit}."),
        running.name: ColumnDoc(
            running.name, "date" if running.is_date else "numeric", running.description
        ),
        theme.treatment[0]: ColumnDoc(theme.treatment[0], "binary", theme.treatment[1]),
        theme.outcome.name: ColumnDoc(theme.outcome.name, "numeric", theme.outcome.description),
    }
    return tuple(docs[name] for name in order)


def notes(theme: Theme, mess: Mess) -> tuple[str, ...]:
    """The Data notes: each kind of mess the extract has, declared."""
    (one, zero), (alt_one, alt_zero) = mess.codes
    return (
        f"Blank cells are written as {missing_fact(mess.tokens)}; which cells are blank is "
        "unrelated to any value (missing completely at random).",
        f"Some records were sent twice: exact duplicate rows (same `{theme.id_name}`) are one "
        f"{theme.unit}, not two.",
        "Some cells carry stray spaces before or after the value.",
        f"`{theme.treatment[0]}` is written `{one}`/`{zero}`, in some rows "
        f"`{alt_one}`/`{alt_zero}`.",
        "Row order and column order carry no information.",
    )


def dictionary(
    theme: Theme,
    sharp: bool,
    cutoff: str,
    date_format: str,
    mess: Mess,
    order: tuple[str, ...],
    bound: float,
    rng: np.random.Generator,
    real: tuple[ColumnDoc, ...] = (),
    source: SourceNote | None = None,
) -> DesignDictionary:
    """The task's README words (`rng`: the prompt stream; `bound`: the disclosed
    effect range's half-width; `real` and `source`: a real task's study columns and
    Source section)."""
    return DesignDictionary(
        title=pick(theme.titles, rng),
        intro=pick(theme.intros, rng),
        question=_question(theme, sharp, rng),
        design=design_facts(theme, sharp, cutoff, date_format, mess, bound),
        assumptions=assumptions(theme, sharp),
        columns=columns(theme, order, real),
        notes=notes(theme, mess),
        source=source,
    )
