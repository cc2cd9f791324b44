"""Check the rdd family: per tier, the reference's (local linear at the IK bandwidth,
robust bias-corrected interval) coverage and mean reward against each naive probe's
(a global quartic, a bandwidth a quarter as wide, a straight line on each whole side),
the reference's mean width over the anchor r, the share of fuzzy designs, the
generation attempts, and generation speed.

    PYTHONPATH=. python scripts/check_design_rdd.py --tasks 240 > scripts/check_design_rdd.txt
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict

import numpy as np

from causal_gym.make import generate_task
from causal_gym.reference.design_rdd import PROBES
from causal_gym.reference.designs import files_answer
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import score_answer

METHODS = ("reference", *PROBES)
TIERS = ("easy", "medium", "hard")


def _mean_se(values: list[float]) -> str:
    a = np.asarray(values, dtype=float)
    if len(a) < 2:
        return "n/a"
    return f"{a.mean():+.3f} ± {a.std(ddof=1) / math.sqrt(len(a)):.3f}"


def _coverage(values: list[bool]) -> str:
    p = float(np.mean(values))
    return f"{p:.3f} ± {math.sqrt(p * (1 - p) / len(values)):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=240)
    parser.add_argument("--key-hex", default="07" * 32)
    args = parser.parse_args()
    key = DerivationKey(bytes.fromhex(args.key_hex), "check")
    covered: dict[tuple[str, str], list[bool]] = defaultdict(list)
    rewards: dict[tuple[str, str], list[float]] = defaultdict(list)
    widths: dict[tuple[str, str], list[float]] = defaultdict(list)
    attempts: dict[str, list[int]] = defaultdict(list)
    fuzzy: dict[str, list[bool]] = defaultdict(list)
    generation = 0.0
    for index in range(args.tasks):
        start = time.process_time()
        task = generate_task(f"train:rdd:{index}", key)
        generation += time.process_time() - start
        tier = task.public.tier.value
        attempts[tier].append(task.public.generation_attempts)
        fuzzy[tier].append(task.public.estimands[0] == "complier_effect_at_cutoff")
        files = dict(task.public.files)
        for method in METHODS:
            answer = files_answer(files, None if method == "reference" else method)
            record = score_answer(task, answer)
            assert record is not None, (task.public.task_id, method)
            covered[tier, method].append(record.covered)
            rewards[tier, method].append(record.reward)
            widths[tier, method].append(record.width_ratio)
    print(f"rdd: {args.tasks} train tasks, key {args.key_hex[:8]}…")
    print(
        f"generation: {args.tasks / generation:.1f} tasks per CPU-second (reference fit included)"
    )
    print()
    header = (
        f"{'tier':7} {'n':>4} {'method':18} {'coverage ± SE':>15} {'mean reward ± SE':>18}"
        f" {'width / r':>10}"
    )
    print(header)
    print("-" * len(header))
    for tier in TIERS:
        n = len(attempts[tier])
        if not n:
            continue
        for method in METHODS:
            cov, rew = covered[tier, method], rewards[tier, method]
            ratio = float(np.median(widths[tier, method]))
            print(
                f"{tier:7} {n:>4} {method:18} {_coverage(cov):>15} {_mean_se(rew):>18}"
                f" {ratio:>10.2f}"
            )
        print()
    print("width / r: the median over the tier's tasks")
    print()
    print(
        f"{'tier':7} {'ref width / r (mean)':>21} {'median':>7} {'fuzzy share':>12} {'attempts':>9}"
    )
    for tier in TIERS:
        if attempts[tier]:
            r = np.asarray(widths[tier, "reference"])
            print(
                f"{tier:7} {r.mean():>21.2f} {np.median(r):>7.2f} {np.mean(fuzzy[tier]):>12.2f}"
                f" {np.mean(attempts[tier]):>9.2f}"
            )
    every = [x for tier in TIERS for x in widths[tier, "reference"]]
    print(f"{'all':7} {np.mean(every):>21.2f} {np.median(every):>7.2f}")


if __name__ == "__main__":
    main()
