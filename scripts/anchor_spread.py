"""Reward version 3's anchors against their estimators' spread on fresh rows.

For train tasks of cate, mediation and obs_vs_rct under the public key, runs the
efficient estimator each anchor is built on (causal_gym/audit/anchor_spread.py) on
fresh clean samples of the task's hidden SCM at the staged clean size, and prints,
per family, estimand and tier, how 2 z_0.95 SD of its estimates compares with the
centre the anchor is computed from (spread / centre: 1 up to an SD's Monte Carlo
error, 1 / sqrt(2 (replicates - 1)), and OLS's finite-sample factor), and where r
sits below that centre (r / centre: the 5% quantile of the estimator's own width).

    .venv/bin/python scripts/anchor_spread.py > docs/audits/anchor_spread.md
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causal_gym.audit.anchor_spread import SpreadCheck, spread_checks
from causal_gym.make import generate_task
from causal_gym.rng_keys.keys import resolve_key

FAMILIES = ("cate", "mediation", "obs_vs_rct")


def checks_of(job: tuple[str, int, int]) -> list[SpreadCheck]:
    task_id, replicates, seed = job
    key = resolve_key(environ={})
    return spread_checks(generate_task(task_id, key), key, replicates, np.random.default_rng(seed))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=15)
    parser.add_argument("--replicates", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.per_family < 1 or args.replicates < 20 or args.workers < 1:
        parser.error("--per-family and --workers take at least 1, --replicates at least 20")
    jobs = [
        (f"train:{family}:{i}", args.replicates, 1000 * k + i)
        for k, family in enumerate(FAMILIES)
        for i in range(args.per_family)
    ]
    with ProcessPoolExecutor(args.workers) as pool:
        found = [c for checks in pool.map(checks_of, jobs) for c in checks]
    slices: dict[tuple[str, str, str], list[SpreadCheck]] = defaultdict(list)
    for check in found:
        family = check.task_id.split(":")[1]
        estimand = "level" if family == "cate" else check.estimand
        slices[(family, estimand, check.tier)].append(check)
        slices[(family, estimand, "all")].append(check)
    mc = 1.0 / math.sqrt(2.0 * (args.replicates - 1))
    print(
        f"{args.per_family} train tasks per family under the public key, {args.replicates} "
        f"fresh samples each (an SD's Monte Carlo error {mc:.1%}); cate's rows are its "
        "levels.\n"
    )
    print("| family | estimand | tier | n | spread / centre: mean | min | max | r / centre |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (family, estimand, tier), checks in sorted(slices.items()):
        ratios = [c.ratio for c in checks]
        shrink = statistics.mean(c.shrink for c in checks)
        print(
            f"| {family} | {estimand} | {tier} | {len(checks)} | {statistics.mean(ratios):.3f} "
            f"| {min(ratios):.3f} | {max(ratios):.3f} | {shrink:.3f} |"
        )
    everything = [c.ratio for c in found]
    print(
        f"\nAll {len(found)} estimands: spread / centre {statistics.mean(everything):.3f} on "
        f"average (SD {statistics.stdev(everything):.3f}, against {mc:.3f} from the Monte "
        "Carlo alone)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
