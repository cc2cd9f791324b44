"""rdd's reference against every honest local-polynomial recipe, per public slice.

    python scripts/rdd_recipes.py --tasks 1200 --out docs/demo/rdd_recipes/recipes.md
    python scripts/rdd_recipes.py --compare runs/rdd_recipes.jsonl runs/rdd_recipes_b.jsonl

--compare picks each slice's best recipe on the first sample and reports its gain on
the second (a fresh key's), beside the second sample's own best: whether a choice by
slice survives the winner's curse.

Issue 54, part 2: an expert who reads the tier and the design (both public) may pick a
recipe per slice, so the reference must be within 0.005 reward of the best honest one
in every slice. This script generates train rdd tasks under a fresh random key,
answers each with a grid of recipes and with the reference, scores all of them with
the project's scorer, and prints per tier and design (sharp, fuzzy) each recipe's
mean reward minus the reference's, with its paired SE.

The recipes, each combined with the README's disclosed range as the reference is (the
normal likelihood of the recipe's estimate and SE times the uniform prior; the
posterior's median and 5% and 95% quantiles):

- conv-pP-mM: a local polynomial of order P (1, 2) at M (0.5, 0.7, 1, 1.5) times the
  MSE-optimal bandwidth h, triangular kernel, HC2 SE. conv-p2-m1 is the reference
  (robust bias correction with rho = 1 is the local quadratic at h).
- rbc-p1-mM: local linear at M h, its bias estimated from a local quadratic at the
  separate bias bandwidth b = 2 M h (rho = 1/2) and subtracted, the SE from the
  combined weights and the quadratic's residuals (Calonico, Cattaneo and Titiunik's
  robust bias correction).

Each row is kept in --rows (jsonl) so a rerun with more tasks appends.
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from causal_gym.audit.rows import scored_answer
from causal_gym.make import generate_task
from causal_gym.reference import design_rdd, designs
from causal_gym.reference import design_rdd_local as local
from causal_gym.rng_keys.keys import DerivationKey

Array = NDArray[np.float64]
MULTIPLIERS = (0.5, 0.7, 1.0, 1.5)
REFERENCE = "conv-p2-m1"
TOLERANCE = 0.005


def _coefficient_weights(x: Array, h: float, degree: int, eligible: bool) -> Array:
    """(degree + 1, n): row k gives each row's weight in the side's x^k coefficient
    (x units), zero off the side's window."""
    fit = local.side_fit(x, h, degree, "triangular", eligible)
    out = np.zeros((degree + 1, x.size))
    for k in range(degree + 1):
        out[k, fit.rows] = fit.solve[k] / h**k
    return out


def _side_residuals(x: Array, y: Array, b: float, eligible: bool) -> Array:
    """y's residuals from the local quadratic at b (zero off its window)."""
    fit = local.side_fit(x, b, 2, "triangular", eligible)
    out = np.zeros_like(y)
    out[fit.rows] = fit.residuals(y)
    return out


def _rbc_weights(x: Array, h: float, b: float) -> tuple[Array, list[tuple[Array, bool]]]:
    """The bias-corrected jump's weights: above minus below of the local linear
    intercept at h less its bias, (sum of its weights times x^2) times the local
    quadratic's x^2 coefficient at b."""
    total = np.zeros_like(x)
    sides = []
    for eligible, sign in ((False, -1.0), (True, 1.0)):
        linear = _coefficient_weights(x, h, 1, eligible)[0]
        quadratic = _coefficient_weights(x, b, 2, eligible)[2]
        weights = linear - float(linear @ x**2) * quadratic
        total += sign * weights
        sides.append((weights, eligible))
    return total, sides


def rbc(data: design_rdd.RddData, h: float, b: float) -> tuple[float, float]:
    """(estimate, SE) of the robust bias-corrected jump (fuzzy: its Wald ratio)."""
    w, sides = _rbc_weights(data.x, h, b)

    def spread(values: Array) -> float:
        return sum(
            float(np.sum(side**2 * _side_residuals(data.x, values, b, eligible) ** 2))
            for side, eligible in sides
        )

    if data.d is None:
        return float(w @ data.y), math.sqrt(spread(data.y))
    first = float(w @ data.d)
    estimate = float(w @ data.y) / first
    return estimate, math.sqrt(spread(data.y - estimate * data.d)) / abs(first)


def recipes(data: design_rdd.RddData) -> Iterator[tuple[str, float, float]]:
    """(name, estimate, SE) of every recipe of the module's docstring."""
    h = design_rdd.bandwidth(data)
    for degree in (1, 2):
        for m in MULTIPLIERS:
            estimate, se = local.wald(local.local_jump(data.x, m * h, degree), data.y, data.d)
            yield f"conv-p{degree}-m{m:g}", estimate, se
    for m in (0.7, 1.0, 1.5):
        estimate, se = rbc(data, m * h, 2 * m * h)
        yield f"rbc-p1-m{m:g}", estimate, se


def task_row(task_id: str, key: DerivationKey) -> dict[str, object]:
    task = generate_task(task_id, key)
    files = dict(task.public.files)
    readme = designs.parse_design_readme(files["README.md"].decode("utf-8"))
    data = design_rdd.rdd_data(designs.read_frame(files["data.csv"], readme), readme)
    bound = designs.effect_range(readme)
    [estimand] = task.public.estimands
    rewards: dict[str, float] = {}
    for name, estimate, se in recipes(data):
        if not (math.isfinite(estimate) and math.isfinite(se) and se > 0):
            continue
        [(median, low, high)] = designs.normal_posterior_quantiles(np.array([estimate]), se, bound)
        answer = {"estimand": estimand, "estimate": median, "ci_lower": low, "ci_upper": high}
        rewards[name] = scored_answer(task, answer).reward
    design = "fuzzy" if data.d is not None else "sharp"
    return {"task": task_id, "tier": task.public.tier.value, "design": design, "rewards": rewards}


def summary(rows: list[dict[str, Any]]) -> str:
    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        cells[f"{row['tier']}/{row['design']}"].append(row)
    names = sorted({n for r in rows for n in r["rewards"]})
    lines = []
    for cell in sorted(cells):
        group = [r for r in cells[cell] if REFERENCE in r["rewards"]]
        reference = np.array([r["rewards"][REFERENCE] for r in group])
        lines.append(f"\n{cell}: {len(group)} tasks, reference reward {reference.mean():.4f}\n")
        lines.append("| recipe | minus reference | SE | verdict |")
        lines.append("|---|---:|---:|---|")
        for name in names:
            pairs = [
                (r["rewards"][name], r["rewards"][REFERENCE]) for r in group if name in r["rewards"]
            ]
            diff = np.array([a - b for a, b in pairs])
            se = float(diff.std(ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else math.nan
            verdict = "BEATS" if diff.mean() > TOLERANCE + 2 * se else ""
            lines.append(f"| {name} | {diff.mean():+.4f} | {se:.4f} | {verdict} |")
    return "\n".join(lines) + "\n"


def _cells(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    cells: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        cells[f"{row['tier']}/{row['design']}"].append(row)
    return cells


def _gain(rows: list[dict[str, Any]], name: str) -> tuple[float, float]:
    diff = np.array(
        [r["rewards"][name] - r["rewards"][REFERENCE] for r in rows if name in r["rewards"]]
    )
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))


def compare(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> str:
    """Each slice's pick on `first`, scored on `second` (module docstring)."""
    a, b = _cells(first), _cells(second)
    lines = [
        "| slice | tasks (second) | picked on the first | its gain on the second (SE)"
        " | best on the second | its gain |",
        "|---|---:|---|---:|---|---:|",
    ]
    for cell in sorted(a.keys() & b.keys()):
        names = sorted({n for r in a[cell] for n in r["rewards"]})
        pick = max(names, key=lambda n: _gain(a[cell], n)[0])
        best = max(names, key=lambda n: _gain(b[cell], n)[0])
        mean, se = _gain(b[cell], pick)
        lines.append(
            f"| {cell} | {len(b[cell])} | {pick} | {mean:+.4f} ({se:.4f})"
            f" | {best} | {_gain(b[cell], best)[0]:+.4f} |"
        )
    return "\n".join(lines) + "\n"


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1200)
    parser.add_argument("--rows", type=Path, default=Path("runs/rdd_recipes.jsonl"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--compare", type=Path, nargs=2, default=None, metavar="ROWS")
    args = parser.parse_args()
    if args.compare is not None:
        text = compare(_read(args.compare[0]), _read(args.compare[1]))
        print(text)
        if args.out is not None:
            args.out.write_text(text)
        return
    rows = (
        [json.loads(line) for line in args.rows.read_text().splitlines()]
        if args.rows.exists()
        else []
    )
    key = DerivationKey(secrets.token_bytes(32), "a fresh random key")
    start, label = time.monotonic(), secrets.token_hex(4)
    args.rows.parent.mkdir(parents=True, exist_ok=True)
    with args.rows.open("a") as sink:
        for i in range(len(rows), args.tasks):
            row = task_row(f"train:rdd:{i}", key)
            row["key"] = label
            rows.append(row)
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            if (i + 1) % 25 == 0:
                print(
                    f"  {i + 1}/{args.tasks} tasks, {time.monotonic() - start:.0f} s",
                    file=sys.stderr,
                )
    text = f"rdd recipes against the reference, {len(rows)} fresh-key train tasks\n" + summary(rows)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
