"""Benchmark: what the linear tiers' OLS anchor (reward version 2) costs generation.

`generate_task` on linear train tasks of the seed families, the process pinned to
one CPU and numeric libraries to one thread, in CPU seconds. Each task is generated
twice in the same loop, with the anchor and with it replaced by a constant, so the
ratio is measured in this run whatever the machine's speed. The anchor's Monte Carlo
is seeded from the task's `anchor` stream; the constant stand-in changes no other
draw, so both runs make the same staged bytes.

    .venv/bin/python scripts/bench_ols_anchor.py [--per-family 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # before numpy loads

from causal_gym.generate import pipeline  # noqa: E402
from causal_gym.generate.draw import plan_task  # noqa: E402
from causal_gym.generate.ols_anchor import OlsAnchor, ols_anchor  # noqa: E402
from causal_gym.rng_keys.keys import resolve_key  # noqa: E402
from causal_gym.task_id import TaskId  # noqa: E402


def linear_ids(family: str, count: int) -> list[str]:
    key = resolve_key(environ={})
    ids, index = [], 1000
    while len(ids) < count:
        task_id = f"train:{family}:{index}"
        if plan_task(key, TaskId.parse(task_id)).tier.value != "expert":
            ids.append(task_id)
        index += 1
    return ids


def cpu_of(task_id: str) -> float:
    key = resolve_key(environ={})
    start = time.process_time()
    pipeline.generate_task(task_id, key)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=30)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print("| family | tasks | with anchor ms | without ms | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for family in ("ate", "adjustment", "null_detect"):
        ids = linear_ids(family, args.per_family)
        cpu_of(ids[0])  # imports and caches
        with_anchor, without = [], []
        for task_id in ids:
            with_anchor.append(cpu_of(task_id))
            pipeline.ols_anchor = lambda scm, marginals, rng: OlsAnchor(1.0, ())
            without.append(cpu_of(task_id))
            pipeline.ols_anchor = ols_anchor
        a, b = statistics.mean(with_anchor), statistics.mean(without)
        print(f"| {family} | {len(ids)} | {a * 1000:.1f} | {b * 1000:.1f} | {a / b:.2f}x |")


if __name__ == "__main__":
    main()
