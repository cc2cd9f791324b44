"""Check the did family: per tier, the reference's (the imputation estimator with a
unit-clustered interval) coverage and mean reward against each naive probe's (two-way
fixed effects, the adopters' mean after minus before), the reference's width over the
anchor r, per subtier the same for the reference and TWFE, the generation attempts,
and generation speed.

    PYTHONPATH=. python scripts/check_design_did.py --tasks 240 > scripts/check_design_did.txt
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict

import numpy as np

from causal_gym.families.did.draw import SUBTIERS
from causal_gym.make import generate_task
from causal_gym.reference.designs import files_answer
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scoring.answer import score_answer
from causal_gym.scoring.reward import ScoreRecord

METHODS = ("reference", "twfe", "post_minus_pre")
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
    subtiers: dict[str, list[str]] = defaultdict(list)
    by_subtier: dict[tuple[str, str], list[ScoreRecord]] = defaultdict(list)
    generation = 0.0
    for index in range(args.tasks):
        start = time.process_time()
        task = generate_task(f"train:did:{index}", key)
        generation += time.process_time() - start
        tier = task.public.tier.value
        attempts[tier].append(task.public.generation_attempts)
        subtiers[tier].append(str(task.hidden.subtier))
        files = dict(task.public.files)
        for method in METHODS:
            answer = files_answer(files, None if method == "reference" else method)
            record = score_answer(task, answer)
            assert record is not None, (task.public.task_id, method)
            covered[tier, method].append(record.covered)
            rewards[tier, method].append(record.reward)
            widths[tier, method].append(record.width_ratio)
            by_subtier[str(task.hidden.subtier), method].append(record)
    print(f"did: {args.tasks} train tasks, key {args.key_hex[:8]}…")
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
    print(f"{'tier':7} {'ref width / r (mean)':>21} {'median':>7} {'attempts':>9}  subtiers")
    for tier in TIERS:
        if attempts[tier]:
            r = np.asarray(widths[tier, "reference"])
            names, counts = np.unique(subtiers[tier], return_counts=True)
            mix = ", ".join(f"{name} {count}" for name, count in zip(names, counts, strict=True))
            print(
                f"{tier:7} {r.mean():>21.2f} {np.median(r):>7.2f} {np.mean(attempts[tier]):>9.2f}"
                f"  {mix}"
            )
    every = [x for tier in TIERS for x in widths[tier, "reference"]]
    print(f"{'all':7} {np.mean(every):>21.2f} {np.median(every):>7.2f}")
    print()
    print(f"{'subtier':20} {'n':>4} {'method':15} {'coverage ± SE':>15} {'mean reward ± SE':>18}")
    for name in SUBTIERS:
        for method in METHODS:
            records = by_subtier[name, method]
            if records:
                cov = [rec.covered for rec in records]
                rew = [rec.reward for rec in records]
                print(
                    f"{name:20} {len(records):>4} {method:15} {_coverage(cov):>15}"
                    f" {_mean_se(rew):>18}"
                )


if __name__ == "__main__":
    main()
