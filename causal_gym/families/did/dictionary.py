"""The did README's words: title, intro, question, the Design facts the reference kit
reads back (reference/design_did.py), the identification assumptions (parallel
trends, no anticipation), the column table and the Data notes that declare every kind
of mess.

Worded from the `prompt` stream; it sees the theme, the date formats, whether the
comparison units never adopt or adopt after the extract ends (public facts of the
design) and the mess, never the model's draw: nothing here carries the truth, the
number of cohorts or the effects' dynamics that set the subtier. Every README says
effects may differ across cohorts and with time since adoption, whatever the draw.
"""

from __future__ import annotations

import numpy as np

from causal_gym.designs.candidate import ColumnDoc, DesignDictionary
from causal_gym.designs.spelling import missing_fact, pick
from causal_gym.families.did.stage import Dates, Mess, spell_id
from causal_gym.families.did.themes import Theme
from causal_gym.staging.source_note import SourceNote

ESTIMAND = "att"


def _example(theme: Theme, style: str) -> str:
    """The format's example in backticks, its remark after it."""
    example, _, remark = dict(theme.calendar.formats)[style].partition(" (")
    return f"`{example}`" + (f" ({remark}" if remark else "")


def _question(theme: Theme, rng: np.random.Generator) -> str:
    y, cal = f"`{theme.outcome}`", theme.calendar
    lead = pick(("What is", "Estimate"), rng)
    end = "?" if lead == "What is" else "."
    return (
        f"{lead} the average effect of {theme.program} on {y} over the treated "
        f"{theme.unit}-{cal.nouns} of data.csv: every {theme.unit}-{cal.noun} at or after the "
        f"{theme.unit}'s adoption {cal.noun} whose `{cal.noun}` and {y} are recorded, each "
        f"counted once (the average treatment effect on the treated, ATT), in the units of "
        f"{y}{end}"
    )


def _id_fact(theme: Theme) -> str:
    spelled = ", ".join(f"`{spell_id(theme.id_prefix, 42, v)}`" for v in range(5))
    return (
        f"one {theme.unit} may be written with either case, a hyphen or a space after the "
        f"prefix, or without leading zeros: {spelled} are the same {theme.unit}"
    )


def _comparison_fact(theme: Theme, never: bool, word: str) -> str:
    if never:
        return (
            f'never-treated {theme.units} (`{theme.adoption_column}` is "{word}"), and the '
            f"adopting {theme.units} before their adoption"
        )
    return (
        f"not-yet-treated {theme.units}: some adopt only after the extract's last "
        f"{theme.calendar.noun} (their `{theme.adoption_column}` is later than every "
        f"`{theme.calendar.noun}`), and the others before their adoption"
    )


def design_facts(
    theme: Theme, dates: Dates, mess: Mess, never: bool
) -> tuple[tuple[str, str], ...]:
    """The Design section: the keys reference/design_did.py reads."""
    cal = theme.calendar
    usual, other = _example(theme, dates.usual), _example(theme, dates.other)
    adoption = (
        f"`{theme.adoption_column}`: the first {cal.noun} the {theme.unit} is treated, written "
        f"like `{theme.calendar.noun}`'s usual format"
    )
    if never:
        adoption += f'; "{mess.never_word}" for a {theme.unit} that never adopts'
    return (
        ("Family", "did"),
        ("Estimand", ESTIMAND),
        ("Treatment", f"`{theme.adoption_column}`"),
        ("Treated from", f"a {theme.unit}'s adoption {cal.noun} on, inclusive; untreated before"),
        ("Outcome", f"`{theme.outcome}`"),
        ("Unit id", f"`{theme.id_column}`"),
        ("Unit id spellings", _id_fact(theme)),
        ("Period", cal.noun),
        ("Date column", f"`{cal.noun}`"),
        ("Date formats", f"{usual}, the usual format; some rows {other}"),
        ("Adoption column", adoption),
        ("Never-adopter code", f'"{mess.never_word}"' if never else "none"),
        ("Comparison group", _comparison_fact(theme, never, mess.never_word)),
        ("Adoption timing", "staggered or simultaneous; set by a schedule, not by outcomes"),
        ("Effects", f"may differ across adoption cohorts and with {cal.nouns} since adoption"),
        ("Missing values", missing_fact(mess.tokens)),
    )


def assumptions(theme: Theme) -> tuple[str, ...]:
    """The identification contract: parallel trends and no anticipation."""
    y, cal = f"`{theme.outcome}`", theme.calendar
    return (
        f"Parallel trends: without {theme.program}, the expected {y} of every {theme.unit} "
        f"would have changed by the same amount from one {cal.noun} to the next, whenever (or "
        f"whether) it adopts; {theme.units} may differ in level, not in trend.",
        f"No anticipation: a {theme.unit}'s {y} does not react to {theme.program} before its "
        f"adoption {cal.noun}.",
        f"Adoption dates are fixed in advance (a roll-out schedule); no {theme.unit} stops "
        "once it has adopted.",
        f"Which {theme.unit}-{cal.nouns} are absent or blank is unrelated to any value.",
    )


def columns(
    theme: Theme, order: tuple[str, ...], real: tuple[ColumnDoc, ...] = ()
) -> tuple[ColumnDoc, ...]:
    """The column table, in data.csv's order (`real`: a real panel's other columns)."""
    cal = theme.calendar
    docs = {doc.name: doc for doc in real} | {
        theme.id_column: ColumnDoc(theme.id_column, "id", f"Identifier of the {theme.unit}."),
        cal.noun: ColumnDoc(cal.noun, "date", f"The {cal.noun} of the record."),
        theme.adoption_column: ColumnDoc(
            theme.adoption_column,
            "date",
            f"The {cal.noun} the {theme.unit} {theme.adopt_verb} (the same on all its rows).",
        ),
        theme.outcome: ColumnDoc(theme.outcome, "numeric", theme.outcome_description),
        theme.attribute: ColumnDoc(theme.attribute, "categorical", theme.attribute_description),
    }
    return tuple(docs[name] for name in order)


def notes(theme: Theme, dates: Dates, mess: Mess) -> tuple[str, ...]:
    """The Data notes: each kind of mess the extract has, declared."""
    cal = theme.calendar
    usual, other = _example(theme, dates.usual), _example(theme, dates.other)
    return (
        f"One row per {theme.unit} and {cal.noun}; some {theme.unit}-{cal.nouns} have no row.",
        f"Blank cells are written as {missing_fact(mess.tokens)}; which cells are blank is "
        "unrelated to any value (missing completely at random).",
        f"`{theme.id_column}` is spelled inconsistently ({_id_fact(theme)}).",
        f"`{cal.noun}` is written like {usual} in most rows and like {other} in some.",
        f"`{theme.adoption_column}` is blank in a few rows; it is the same on every row of a "
        f"{theme.unit}, so its other rows give it.",
        f"Some records were sent twice: a {theme.unit}-{cal.noun} appears at most once in "
        "the source, so exact duplicate rows are one record.",
        "Some cells carry stray spaces before or after the value.",
        "Row order and column order carry no information.",
    )


def dictionary(
    theme: Theme,
    dates: Dates,
    mess: Mess,
    never: bool,
    order: tuple[str, ...],
    rng: np.random.Generator,
    real: tuple[ColumnDoc, ...] = (),
    source: SourceNote | None = None,
) -> DesignDictionary:
    """The task's README words (`rng`: the prompt stream; `real` and `source`: a real
    task's study columns and Source section)."""
    return DesignDictionary(
        title=pick(theme.titles, rng),
        intro=pick(theme.intros, rng),
        question=_question(theme, rng),
        design=design_facts(theme, dates, mess, never),
        assumptions=assumptions(theme),
        columns=columns(theme, order, real),
        notes=notes(theme, dates, mess),
        source=source,
    )
