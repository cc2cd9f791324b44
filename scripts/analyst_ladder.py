"""The tables of docs/demo/analyst/decision_values.md, from analyst_decisions.py's
JSON alone: what each decision is worth per family and context, and the ladder of
policies from random decisions to the reference.

    python scripts/analyst_ladder.py docs/demo/analyst/decisions.json \
        --json docs/demo/analyst/decision_values.json --md docs/demo/analyst/decision_values.md

A decision's worth is the mean paired difference, on the same tasks, between the
reference's own choices (the pre-treatment columns, AIPW where the README says
relationships may be nonlinear and OLS elsewhere, the standard width, shrinking on
null_detect, the effect probability nearest the reference's) and the same choices
with that one decision changed, with its standard error.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]
Choice = dict[str, Any]
FAMILIES = ("ate", "adjustment", "null_detect")
KEYS = ("columns", "estimator", "width", "shrink", "effect_probability")


def key(choice: Choice) -> tuple[Any, ...]:
    return tuple(choice[k] for k in KEYS)


def rewards(task: Row) -> dict[tuple[Any, ...], float]:
    return {key(c): c["reward"] for c in task["candidates"]}


def reference_choice(task: Row) -> Choice:
    """The reference's decisions, as the grid has them."""
    p = task.get("reference_effect_probability")
    levels = (0.1, 0.3, 0.5, 0.7, 0.9)
    return {
        "columns": "pre",
        "estimator": "aipw" if task["nonlinear"] else "ols",
        "width": "standard",
        "shrink": task["family"] == "null_detect",
        "effect_probability": min(levels, key=lambda v: abs(v - p)) if p is not None else None,
    }


def evidence_probability(z: float | None) -> float:
    """The context rule's effect probability from the fit's |z|."""
    if z is None:
        return 0.5
    return 0.1 if abs(z) < 1 else 0.3 if abs(z) < 2 else 0.7 if abs(z) < 3 else 0.9


def context_rule(task: Row) -> Choice:
    """A rule that reads the README's functional-form line and the fit's z."""
    estimator = "aipw" if task["nonlinear"] else "ols"
    null = task["family"] == "null_detect"
    return {
        "columns": "pre",
        "estimator": estimator,
        "width": "standard",
        "shrink": null,
        "effect_probability": evidence_probability(task["z"][f"pre/{estimator}"]) if null else None,
    }


def mean_se(values: list[float]) -> dict[str, float]:
    n = len(values)
    se = statistics.stdev(values) / math.sqrt(n) if n > 1 else float("nan")
    return {"n": n, "mean": round(statistics.fmean(values), 4), "se": round(se, 4)}


def contrasts(tasks: list[Row]) -> list[dict[str, Any]]:
    """Each single change from the reference's choices: mean paired difference, by
    family and by context (the README's nonlinear line or not)."""
    changes: list[tuple[str, Callable[[Choice], Choice]]] = [
        ("compare means (no columns)", lambda c: {**c, "columns": "none"}),
        ("add the post-treatment columns", lambda c: {**c, "columns": "all"}),
        ("drop apparent instruments", lambda c: {**c, "columns": "pre_less_instruments"}),
        (
            "the other estimator",
            lambda c: {**c, "estimator": "ols" if c["estimator"] == "aipw" else "aipw"},
        ),
        ("halve the interval", lambda c: {**c, "width": "narrow"}),
        ("double the interval", lambda c: {**c, "width": "wide"}),
        ("toggle shrinking", lambda c: {**c, "shrink": not c["shrink"]}),
    ]
    out = []
    for family in FAMILIES:
        mine = [t for t in tasks if t["family"] == family]
        for name, change in changes:
            for context, subset in (
                ("all", mine),
                ("nonlinear line", [t for t in mine if t["nonlinear"]]),
                ("no such line", [t for t in mine if not t["nonlinear"]]),
            ):
                if not subset:
                    continue
                diffs = []
                for t in subset:
                    r, base = rewards(t), reference_choice(t)
                    diffs.append(r[key(change(base))] - r[key(base)])
                out.append(
                    {"family": family, "decision": name, "context": context, **mean_se(diffs)}
                )
        if family == "null_detect":
            for level in (0.1, 0.3, 0.5, 0.7, 0.9):
                diffs = []
                for t in mine:
                    r, base = rewards(t), reference_choice(t)
                    diffs.append(r[key({**base, "effect_probability": level})] - r[key(base)])
                out.append(
                    {
                        "family": family,
                        "decision": f"effect probability always {level}",
                        "context": "all",
                        **mean_se(diffs),
                    }
                )
    return out


#: The options the analyst toolset kept (the table shows the others worth nothing):
#: no instrument dropping, no shrinking.
TOOLSET_COLUMNS = ("none", "pre", "all")


def in_toolset(k: tuple[Any, ...]) -> bool:
    choice = dict(zip(KEYS, k, strict=True))
    return choice["columns"] in TOOLSET_COLUMNS and not choice["shrink"]


def ladder(tasks: list[Row]) -> list[dict[str, Any]]:
    """Mean reward per family, over the toolset's options, of: random decisions, the
    best single decision, the context rule, the reference's decisions, the best
    decision per task; and the reference analyst itself (who also shrinks on
    null_detect)."""
    out = []
    for family in FAMILIES:
        mine = [t for t in tasks if t["family"] == family]
        configs = {key(c) for c in mine[0]["candidates"] if in_toolset(key(c))}
        best = max(configs, key=lambda k: statistics.fmean(rewards(t)[k] for t in mine))

        def kept(t: Row) -> list[float]:
            return [v for k, v in rewards(t).items() if in_toolset(k)]

        def unshrunk(choice: Choice) -> tuple[Any, ...]:
            return key({**choice, "shrink": False})

        rungs = {
            "random decisions": [statistics.fmean(kept(t)) for t in mine],
            "best single decision": [rewards(t)[best] for t in mine],
            "context rule": [rewards(t)[unshrunk(context_rule(t))] for t in mine],
            "reference's decisions": [rewards(t)[unshrunk(reference_choice(t))] for t in mine],
            "best decision per task": [max(kept(t)) for t in mine],
            "reference": [t["reference_reward"] for t in mine],
        }
        for rung, values in rungs.items():
            entry = {"family": family, "policy": rung, **mean_se(values)}
            if rung == "best single decision":
                entry["decision"] = dict(zip(KEYS, best, strict=True))
            out.append(entry)
    return out


def markdown(values: list[dict[str, Any]], rungs: list[dict[str, Any]], n: int) -> str:
    lines = [
        "# What an analyst's decisions are worth (seed families)",
        "",
        f"{n} fresh-key train tasks, every combination of the decisions scored under a "
        "handle of its own (`scripts/analyst_decisions.py`, tables by "
        "`scripts/analyst_ladder.py`). Clipped reward; mean ± SE of the paired difference.",
        "",
        "## One decision changed from the reference's",
        "",
        "| family | decision | context | tasks | change in reward |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for v in values:
        lines.append(
            f"| {v['family']} | {v['decision']} | {v['context']} | {v['n']} | "
            f"{v['mean']:+.3f} ± {v['se']:.3f} |"
        )
    lines += [
        "",
        "## The ladder, over the analyst toolset's options",
        "",
        "Columns none, pre-treatment or all; OLS or AIPW; width x0.5, 1 or 2; on null_detect "
        "an effect probability of 0.1, 0.3, 0.5, 0.7 or 0.9 (the context rule: by the fit's "
        "|z|, under 1, 2, 3 or above); no shrinking. The reference analyst also shrinks "
        "null_detect's answer toward its disclosed prior.",
        "",
        "| family | policy | tasks | mean reward |",
        "| --- | --- | ---: | ---: |",
    ]
    for r in rungs:
        extra = ""
        if "decision" in r:
            d = r["decision"]
            extra = f" ({d['columns']}, {d['estimator']}, {d['width']}" + (
                f", p {d['effect_probability']})" if d["effect_probability"] is not None else ")"
            )
        lines.append(
            f"| {r['family']} | {r['policy']}{extra} | {r['n']} | "
            f"{r['mean']:+.3f} ± {r['se']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("decisions", type=Path)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--md", type=Path, required=True)
    args = parser.parse_args()
    tasks = json.loads(args.decisions.read_text())["tasks"]
    values, rungs = contrasts(tasks), ladder(tasks)
    args.json.write_text(json.dumps({"values": values, "ladder": rungs}, indent=1) + "\n")
    args.md.write_text(markdown(values, rungs, len(tasks)))
    print(args.md.read_text())


if __name__ == "__main__":
    main()
