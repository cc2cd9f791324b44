"""What each of an analyst's decisions is worth, measured before the analyst toolset's
options were fixed (issue 53): fresh-key train tasks of the seed families, every
combination of the decisions scored under a handle of its own on the same task.

    python scripts/analyst_decisions.py --per-family 60 --out docs/demo/analyst/decisions.json

The decisions (causal_gym/reference/decisions.py computes every number):
- columns: none (the difference in means), the pre-treatment columns, every measured
  column (post-treatment ones too), the pre-treatment columns less the apparent
  instruments (columns that predict the treatment strongly and the outcome not at all,
  given the rest: |t| > 4 for the treatment, < 1 for the outcome);
- estimator: OLS, or cross-fitted AIPW with boosted trees;
- width: the fit's 90% interval x 0.5, 1, 2;
- shrink: report the fit, or the posterior under the README's disclosed effect sizes;
- effect probability (null_detect): 0.1, 0.3, 0.5, 0.7, 0.9.

Tasks come from a LocalSource under a key made here (never eval or held-out tasks);
every candidate answer and the reference's own are scored by the stream's scorer. The
JSON holds one row per task: its tier, whether the README says relationships may be
nonlinear, the fits' z statistics and every candidate's clipped reward. The tables
(analyst_ladder.py) are computed from that file alone.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from causal_gym.reference import analyst, decisions, posterior
from causal_gym.reference.answer import files_answer
from orchestrator.integrations.sources import LocalSource

COLUMN_SETS = ("none", "pre", "all", "pre_less_instruments")
PROBABILITIES = (0.1, 0.3, 0.5, 0.7, 0.9)


def apparent_instruments(staged: Any, d: analyst.DataDictionary) -> tuple[str, ...]:
    """Numeric pre-treatment columns that predict the treatment (|t| > 4 in a linear
    probability model on every pre-treatment column) but not the outcome (|t| < 1 in
    the adjusted regression): what an analyst could read as instruments."""
    from statsmodels.regression.linear_model import OLS

    numeric = tuple(c for c in d.pre_treatment if d.types[c] != "categorical")
    clean = analyst.clean_rows(staged, d, d.pre_treatment).frame
    t = clean["__t"].to_numpy(float)
    y = clean[d.outcome].to_numpy(float)
    ones = np.ones(len(t))
    others = analyst.covariate_columns(clean, d.pre_treatment, d)
    on_t = OLS(t, np.column_stack([ones, *others])).fit()
    on_y = OLS(y, np.column_stack([ones, t, *others])).fit()
    # covariate_columns puts the numeric columns first, in pre_treatment order
    found = []
    for i, column in enumerate(numeric):
        if abs(on_t.tvalues[1 + i]) > 4 and abs(on_y.tvalues[2 + i]) < 1:
            found.append(column)
    return tuple(found)


def column_set(
    name: str, d: analyst.DataDictionary, instruments: tuple[str, ...]
) -> tuple[str, ...]:
    if name == "none":
        return ()
    if name == "pre":
        return d.pre_treatment
    if name == "all":
        return (*d.pre_treatment, *d.post_treatment)
    return tuple(c for c in d.pre_treatment if c not in instruments)


def measure_task(source: LocalSource) -> dict[str, Any]:
    task = source.next_task()
    files = dict(task.files)
    readme = files["README.md"].decode("utf-8")
    d = analyst.parse_readme(readme)
    staged = analyst.read_staged(files["data.csv"], d)
    prior = posterior.disclosed_prior(readme, d.family)
    instruments = apparent_instruments(staged, d)
    fits: dict[tuple[str, str], analyst.ReferenceFit] = {}
    for cols, estimator in itertools.product(COLUMN_SETS, decisions.ESTIMATORS):
        choice = decisions.FitChoice(column_set(cols, d, instruments), estimator)
        fits[cols, estimator] = decisions.fit_choice(staged, d, choice)
    probabilities = PROBABILITIES if d.family == "null_detect" else (None,)
    candidates: list[tuple[dict[str, Any], dict[str, object] | None]] = []
    for (cols, estimator), fit in fits.items():
        for width, shrink, p in itertools.product(decisions.WIDTHS, (False, True), probabilities):
            choice = {
                "columns": cols,
                "estimator": estimator,
                "width": width,
                "shrink": shrink,
                "effect_probability": p,
            }
            try:
                answer = decisions.build_answer(
                    d.family,
                    fit.estimate,
                    fit.se,
                    column_set(cols, d, instruments),
                    width,
                    p,
                    prior if shrink else None,
                )
            except decisions.ChoiceError:
                answer = None  # not estimable: the choice scores as no answer
            candidates.append((choice, answer))
    reference = files_answer(files)
    _, handles = task, (task.handle, *source._supply.extend(task.handle, len(candidates)))
    scored = []
    for (choice, answer), handle in zip(candidates, handles[1:], strict=True):
        reward = source.score(handle, answer).clipped_reward if answer is not None else -1.0
        scored.append({**choice, "reward": round(reward, 6)})
    reference_score = source.score(handles[0], reference)
    z = {
        f"{c}/{e}": (round(f.estimate / f.se, 4) if np.isfinite(f.estimate) and f.se > 0 else None)
        for (c, e), f in fits.items()
    }
    return {
        "family": d.family,
        "nonlinear": d.nonlinear,
        "real": "\n## Source\n" in readme,
        "rows": len(staged),
        "pre_treatment": len(d.pre_treatment),
        "post_treatment": len(d.post_treatment),
        "apparent_instruments": len(instruments),
        "z": z,
        "reference_reward": round(reference_score.clipped_reward, 6),
        "reference_effect_probability": reference.get("effect_probability"),
        "candidates": scored,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=60)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.per_family < 1:
        parser.error("--per-family is at least 1")
    source = LocalSource(("ate", "adjustment", "null_detect"))
    rows: list[dict[str, Any]] = []
    began = time.monotonic()
    total = 3 * args.per_family
    try:
        for i in range(total):
            rows.append(measure_task(source))
            took = time.monotonic() - began
            print(
                f"  {i + 1}/{total} tasks, {took:.0f} s, about "
                f"{took / (i + 1) * (total - i - 1):.0f} s to go",
                file=sys.stderr,
                flush=True,
            )
    finally:
        source.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {"command": " ".join(["python", *sys.argv]), "tasks": rows}
    args.out.write_text(json.dumps(report, separators=(",", ":")) + "\n")
    print(f"wrote {args.out} ({len(rows)} tasks)")


if __name__ == "__main__":
    main()
