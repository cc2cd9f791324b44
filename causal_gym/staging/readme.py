"""README.md (the data dictionary) and the agent prompt, from public facts only.

The renderer receives names, timings, descriptions, the treatment coding and the
family's wording; it is never handed the SCM, so it cannot leak a role or the truth.
Tables keep one fixed layout (the reference analyst parses them); the prose around
them is worded by the `prompt` stream. What a family says (its question, its answer
section, its assumptions) comes from its hooks through the `FamilyWording` protocol,
so staging names no family and knows no registry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import Kind, Timing
from causal_gym.staging.mess import TreatmentCoding
from causal_gym.staging.naming import ColumnSpec, Theme
from causal_gym.staging.source_note import SourceNote
from causal_gym.task_id import Family

_TYPE_WORD = {Kind.CONTINUOUS: "numeric", Kind.BINARY: "binary", Kind.CATEGORICAL: "categorical"}

_TITLES = (
    "{setting}: observational extract",
    "Observational records from {setting}",
    "{unit_cap}-level data from {setting}",
)
_INTROS = (
    "Each row of data.csv is one {unit} among {population}. The file has {n_rows} rows.",
    "data.csv holds {n_rows} rows, one per {unit}, describing {population}.",
    "This extract covers {population}: {n_rows} rows in data.csv, each a single {unit}.",
)
_QUESTIONS = (
    "Estimate the population average treatment effect (ATE) of `{t}` on `{y}`: the mean "
    "of `{y}` if every {unit} had the intervention minus its mean if none had.",
    "The target is the average treatment effect of `{t}` on `{y}` over the whole population "
    "of {unit}s, i.e. E[{y}(1)] - E[{y}(0)], in the units of `{y}`.",
    "What is the population ATE of `{t}` on `{y}`? That is the expected difference in `{y}` "
    "between a world where every {unit} receives the intervention and one where none does.",
)
_IGNORABILITY = (
    "Conditional ignorability: given the observed pre-treatment columns, who got the "
    "intervention is independent of the potential outcomes (no unmeasured confounding "
    "beyond what those columns capture).",
    "No unobserved confounding once you condition on the observed pre-treatment covariates: "
    "treatment is as good as random within their strata.",
)


class FamilyWording(Protocol):
    """What the README asks of a family (causal_gym.hooks.FamilyHooks provides it)."""

    @property
    def effect_size_subject(self) -> str: ...

    @property
    def effect_size_detail(self) -> str: ...

    def effect_size_note(self, declared: Mapping[str, str]) -> str: ...

    @property
    def estimands(self) -> tuple[str, ...]: ...

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]: ...

    def question(self, treatment: str, outcome: str, unit: str) -> str | None: ...

    def context_lines(self, declared: Mapping[str, str]) -> list[str]: ...

    def assumption_lines(self) -> list[str] | None: ...


@dataclass(frozen=True)
class ReadmeFacts:
    family: Family
    #: The family's hooks, as the README needs them.
    wording: FamilyWording
    theme: Theme
    n_rows: int
    columns: tuple[ColumnSpec, ...]
    coding: TreatmentCoding
    submission_schema: dict[str, object]
    #: Public names the family declares ("modifier", "mediator", "trial_rows").
    declared: dict[str, str] = field(default_factory=dict)
    #: The expert tier: the README warns that relationships may be nonlinear.
    nonlinear: bool = False
    #: Generator version 3's effect-size prior, disclosed (ate and adjustment tasks).
    effect_sizes: bool = False
    #: The real tier's study.
    source: SourceNote | None = None


def _pick(options: tuple[str, ...], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


def _bound(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _type_word(spec: ColumnSpec) -> str:
    """The documented value type: what every staged value of the column can be."""
    if spec.value_kind is None:
        return _TYPE_WORD[spec.kind]
    low, high = _bound(spec.low), _bound(spec.high)
    return {
        ValueKind.REAL: "number",
        ValueKind.POSITIVE: "positive number",
        ValueKind.BOUNDED: f"number in [{low}, {high}]",
        ValueKind.COUNT: "count (integer >= 0)",
        ValueKind.SCORE: f"integer in [{low}, {high}]",
    }[spec.value_kind]


def _column_row(spec: ColumnSpec) -> str:
    kind = "coded" if spec.timing is Timing.TREATMENT else _type_word(spec)
    text = spec.description.rstrip(".")
    if spec.unit:
        text += f" ({spec.unit})"
    if spec.kind is Kind.CATEGORICAL:
        text += "; one of " + ", ".join(f"`{lv}`" for lv in sorted(spec.levels))
    if spec.timing is Timing.TREATMENT:
        text += "; codes listed under Treatment coding"
    return f"| `{spec.name}` | {spec.timing.value} | {kind} | {text}. |"


def _family_section(spec: FamilyWording, declared: dict[str, str]) -> list[str]:
    if spec.estimands == ("ate",):
        shared = "Report a 90% interval for the ATE (`ci_lower` <= `ci_upper`)."
    else:
        shared = "Report a 90% interval for each effect (`ci_lower` <= `ci_upper`)."
    return [shared, *spec.readme_lines(declared)]


def effect_size_line(
    outcome: str, spec: FamilyWording, declared: Mapping[str, str] | None = None
) -> str:
    """The disclosed effect-size prior (plan/effects.py) and the family's note on how
    its estimands split it; reference/posterior.py reads its numbers back, and its
    presence tells a generator-3 task."""
    from causal_gym.plan.effects import HALF_WIDTH_HIGH, HALF_WIDTH_LOW

    return (
        f"Effect size: {spec.effect_size_subject} was drawn uniformly between -A and A (in "
        f"units of `{outcome}`), with A drawn log-uniformly between {HALF_WIDTH_LOW:g} and "
        f"{HALF_WIDTH_HIGH:g}.{spec.effect_size_note(declared or {})}"
    )


def render_readme(facts: ReadmeFacts, rng: np.random.Generator) -> str:
    theme = facts.theme
    treatment = next(c for c in facts.columns if c.timing is Timing.TREATMENT)
    outcome = next(c for c in facts.columns if c.timing is Timing.OUTCOME)
    fill = {
        "unit": theme.unit,
        "unit_cap": theme.unit.capitalize(),
        "population": theme.population,
        "setting": theme.setting,
        "n_rows": facts.n_rows,
        "t": treatment.name,
        "y": outcome.name,
    }
    title = _pick(_TITLES, rng).format(**fill)
    lines = [
        f"# {title[0].upper()}{title[1:]}",
        "",
        _pick(_INTROS, rng).format(**fill),
        "",
        f"Answer type: `{facts.family.value}`",
        "",
        "## Question",
        "",
        _pick(_QUESTIONS, rng).format(**fill),
        "",
    ]
    spec = facts.wording
    own_question = spec.question(treatment.name, outcome.name, theme.unit)
    if own_question is not None:
        lines[-2] = own_question
    if facts.source is not None:
        lines += facts.source.lines(treatment.name, outcome.name)
    context = spec.context_lines(facts.declared)
    lines += [*context, ""] if context else []
    lines += [
        "## Columns",
        "",
        "| Column | Timing | Type | Description |",
        "| --- | --- | --- | --- |",
    ]
    lines += [_column_row(spec) for spec in facts.columns]
    timing_note = (
        "Pre-treatment columns were recorded before the intervention was assigned. "
        "Post-treatment columns were recorded afterwards and may be affected by it."
    )
    if "mediator" in facts.declared:
        timing_note += " The mediator was recorded after the intervention and before the outcome."
    lines += [
        "",
        timing_note,
        "",
        "## Treatment coding",
        "",
        "| Value | Meaning |",
        "| --- | --- |",
    ]
    lines += [f"| `{code}` | treated |" for code in facts.coding.treated]
    lines += [f"| `{code}` | control |" for code in facts.coding.control]
    lines += [
        "",
        "## Data quality",
        "",
        "- Missing values are empty cells.",
        "- Like most real extracts, this one may contain exact duplicate records, a few "
        "gross data-entry errors in the outcome, and more than one spelling of the "
        "treatment code (every spelling is listed above).",
        "- Apart from those outcome errors, every value fits its column's type in the "
        "dictionary: counts are whole numbers of at least 0, ranges include their ends.",
        "- Row order and column order carry no information.",
        "",
        "## Assumptions",
        "",
        f"- {_pick(_IGNORABILITY, rng)}",
        "- Consistency: a unit's observed outcome is its potential outcome under the "
        "treatment it actually received.",
        "- Positivity: every unit had a probability strictly between 0 and 1 of receiving "
        "the intervention, given its pre-treatment covariates.",
        "",
        "## Submission",
        "",
    ]
    if facts.source is not None and not facts.source.semi_synthetic:
        start = lines.index("## Data quality") + 2
        lines[start + 1 : start + 3] = [
            "- Nothing was altered or added: two identical rows are two people, and every "
            "value is as the studies recorded it.",
        ]
    contract = spec.assumption_lines()
    if contract is not None:
        start = lines.index("## Assumptions") + 2
        lines[start : start + 3] = [f"- {line}" for line in contract]
    if facts.nonlinear:  # the expert tier: the form is open, and the README says so
        end = lines.index("## Submission") - 1
        lines[end:end] = [
            "- Functional form: nothing is assumed about it. How the intervention was "
            f"assigned, how `{outcome.name}` depends on the pre-treatment columns and how "
            f"the effect differs between {theme.unit}s may all be nonlinear.",
        ]
    lines += _family_section(spec, facts.declared)
    if facts.effect_sizes:
        lines.append(effect_size_line(outcome.name, spec, facts.declared))
    lines += [
        "",
        "Submit exactly one JSON object matching this schema with the `submit_answer` "
        "tool. Invalid submissions are answered with the validation errors and cost a "
        "turn; the first valid submission is final.",
        "",
        "```json",
        json.dumps(facts.submission_schema, indent=2, sort_keys=True),
        "```",
        "",
    ]
    return "\n".join(lines)


def render_prompt(facts: ReadmeFacts, rng: np.random.Generator) -> str:
    opener = _pick(
        (
            "You are a data analyst working on an observational study.",
            "You are analysing observational data to answer a causal question.",
            "Act as an applied statistician estimating a causal effect from observational data.",
        ),
        rng,
    )
    if "trial_rows" in facts.declared:
        files = (
            f"exactly three files: data.csv ({facts.n_rows} rows), trial.csv "
            f"({facts.declared['trial_rows']} rows)"
        )
        data = "data.csv and trial.csv"
    else:
        files, data = f"exactly two files: data.csv ({facts.n_rows} rows)", "data.csv"
    return (
        f"{opener} The directory /workspace holds {files} and README.md, the data dictionary "
        "with the question, the assumptions and the answer schema. Read README.md first, "
        f"analyse {data} with the bash and python tools, then call submit_answer once with a "
        "JSON object that matches the schema."
    )
