"""The one README layout of the design families, and their prompt.

Section order and headings are fixed (the reference kit finds the Design section by
its heading and reads its "- Key: value" lines); everything a family says comes in
its DesignDictionary, worded by the family from the prompt stream. The renderer
never sees the truth: it is given public words only.
"""

from __future__ import annotations

import json
from typing import Any

from causal_gym.designs.candidate import DesignDictionary

_ANSWER = (
    "Submit one JSON object (with the `submit_answer` tool) matching this schema. Name "
    "the estimand the Design section asks for in `estimand`, and give a 90% interval: "
    "the reward pays for a point estimate close to the truth and an interval that covers "
    "it without being wider than it needs to be."
)


def render_design_readme(family: str, dictionary: DesignDictionary, schema: dict[str, Any]) -> str:
    """README.md for a design task."""
    lines = [f"# {dictionary.title}", "", dictionary.intro, ""]
    lines += [f"Answer type: `{family}`", "", "## Question", ""]
    lines += [dictionary.question, "", "## Design", ""]
    lines += [f"- {key}: {value}" for key, value in dictionary.design]
    lines += ["", "## Assumptions", ""]
    lines += [f"- {text}" for text in dictionary.assumptions]
    if dictionary.source is not None:
        treatment, outcome = dictionary.fact("Treatment"), dictionary.fact("Outcome")
        lines += ["", *dictionary.source.lines(treatment.strip("`"), outcome.strip("`"))][:-1]
    lines += ["", "## Columns", "", "| column | type | description |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.kind} | {c.description} |" for c in dictionary.columns]
    if dictionary.notes:
        lines += ["", "## Data notes", ""]
        lines += [f"- {text}" for text in dictionary.notes]
    lines += ["", "## Answer", "", _ANSWER, "", "```json"]
    lines += [json.dumps(schema, indent=2, sort_keys=True), "```", ""]
    return "\n".join(lines)


def render_design_prompt(dictionary: DesignDictionary, estimand: str) -> str:
    """The agent's prompt: where the files are, the question, and what to submit."""
    return (
        "You are given a causal-inference task in the working directory: data.csv and "
        "README.md (its data dictionary and design). "
        f"{dictionary.question} "
        f"Read README.md first: its Design section says how the data were generated "
        f"and names the estimand ({estimand!r}). Analyse data.csv with the tools you have, "
        "then call submit_answer once with the JSON object README.md's Answer section "
        "describes."
    )
