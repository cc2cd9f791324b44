"""Check the iv family: per tier, the reference's (2SLS + Anderson-Rubin) coverage and
mean reward against each naive probe's, the reference's mean width over the anchor r,
the Wald interval's coverage next to AR's (it under-covers on the weak-instrument
tier), and generation speed.

    PYTHONPATH=. python scripts/check_design_iv.py --tasks 240 > scripts/check_design_iv.txt
"""

from __future__ import annotations

import argparse
import math
import time
from collections import defaultdict

import numpy as np

from causal_gym.make import generate_task
from causal_gym.reference.design_iv import PROBES
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
    ratios: dict[str, list[float]] = defaultdict(list)
    attempts: dict[str, list[int]] = defaultdict(list)
    estimands: dict[str, list[str]] = defaultdict(list)
    generation = 0.0
    for index in range(args.tasks):
        start = time.process_time()
        task = generate_task(f"train:iv:{index}", key)
        generation += time.process_time() - start
        tier = task.public.tier.value
        attempts[tier].append(task.public.generation_attempts)
        estimands[tier].append(task.public.estimands[0])
        files = dict(task.public.files)
        for method in METHODS:
            answer = files_answer(files, None if method == "reference" else method)
            record = score_answer(task, answer)
            assert record is not None, (task.public.task_id, method)
            covered[tier, method].append(record.covered)
            rewards[tier, method].append(record.reward)
            if method == "reference":
                ratios[tier].append(record.width_ratio)
    print(f"iv: {args.tasks} train tasks, key {args.key_hex[:8]}…")
    print(
        f"generation: {args.tasks / generation:.1f} tasks per CPU-second (reference fit included)"
    )
    print()
    header = f"{'tier':7} {'n':>4} {'method':13} {'coverage ± SE':>15} {'mean reward ± SE':>18}"
    print(header)
    print("-" * len(header))
    for tier in TIERS:
        n = len(ratios[tier])
        if not n:
            continue
        for method in METHODS:
            cov, rew = covered[tier, method], rewards[tier, method]
            print(f"{tier:7} {n:>4} {method:13} {_coverage(cov):>15} {_mean_se(rew):>18}")
        print()
    print(f"{'tier':7} {'width / r (mean)':>17} {'median':>7} {'late share':>11} {'attempts':>9}")
    for tier in TIERS:
        if ratios[tier]:
            r = np.asarray(ratios[tier])
            late = np.mean([e == "late" for e in estimands[tier]])
            print(
                f"{tier:7} {r.mean():>17.2f} {np.median(r):>7.2f} {late:>11.2f}"
                f" {np.mean(attempts[tier]):>9.2f}"
            )
    every = [x for tier in TIERS for x in ratios[tier]]
    print(f"{'all':7} {np.mean(every):>17.2f} {np.median(every):>7.2f}")


if __name__ == "__main__":
    main()
