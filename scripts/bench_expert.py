"""Benchmark: expert-tier generation CPU per task, against its 0.25 s budget.

`generate_task` on eval-expert-v1 ids, the process pinned to one CPU and every
numeric library to one thread, timed in CPU seconds (the machine is shared; wall
time swings). Beside the total, the two parts the expert tier adds are timed again
on the same task: the term means (quadrature under the roots' marginals) and the
efficiency-bound Monte Carlo. (Generation fits no flexible reference: solvability
asks the bound, generate/solvability.py.) A linear (non-expert) train task of the
same family is generated in the same loop, so "expert / linear" is a ratio measured
in this run, whatever the machine's speed.

    .venv/bin/python scripts/bench_expert.py [--per-family 50] [--json docs/benchmarks/expert.json]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"  # before numpy loads
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from causal_gym import generate_task, resolve_key  # noqa: E402
from causal_gym.generate.draw import plan_task  # noqa: E402
from causal_gym.generate.efficiency import efficiency_bound  # noqa: E402
from causal_gym.generate.pipeline import draw_scm  # noqa: E402
from causal_gym.plan.tiers import Tier  # noqa: E402
from causal_gym.rng_keys.derive import derive_streams  # noqa: E402
from causal_gym.scm.expectations import centered  # noqa: E402
from causal_gym.task_id import EXPERT_FAMILIES, TaskId  # noqa: E402
from scripts.bench_results import write_result  # noqa: E402

BUDGET_S = 0.25


def _timed(fn, *args):  # type: ignore[no-untyped-def]
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def parts(task_id: str, key, attempts: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """CPU seconds for the term means and the anchor's Monte Carlo."""
    tid = TaskId.parse(task_id)
    streams = derive_streams(key, tid, attempts - 1)
    scm, naming = draw_scm(plan_task(key, tid), streams)
    assert scm.nonlinear is not None
    means = _timed(centered, scm.nonlinear, naming.marginals)
    anchor = _timed(efficiency_bound, scm, naming.marginals, np.random.default_rng(0))
    return means, anchor


def linear_ids(family: str, key) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Train ids of the family whose tasks are not expert, in index order."""
    for index in itertools.count():
        tid = TaskId.parse(f"train:{family}:{index}")
        if plan_task(key, tid).tier is not Tier.EXPERT:
            yield str(tid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=50)
    parser.add_argument(
        "--json", type=Path, help="write the numbers here (scripts/bench_results.py)"
    )
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    key = resolve_key(environ={})
    generate_task("eval-expert-v1:ate:0", key)  # warm imports outside the clock
    console = Console(width=120)
    table = Table(title=f"bench_expert (CPU s, one core, {args.per_family} tasks per family)")
    for col in (
        "family",
        "mean s",
        "p50 s",
        "p95 s",
        "max s",
        f"over {BUDGET_S} s",
        "term means",
        "anchor MC",
        "linear task s",
        "expert / linear",
    ):
        table.add_column(col, justify="right")
    numbers = {}
    with Progress(console=console) as progress:
        for family in EXPERT_FAMILIES:
            job = progress.add_task(family, total=args.per_family)
            totals, linear, split = [], [], []
            others = linear_ids(family, key)
            for i in range(args.per_family):
                task_id = f"eval-expert-v1:{family}:{i}"
                start = time.process_time()
                task = generate_task(task_id, key)
                totals.append(time.process_time() - start)
                assert task.public.tier is Tier.EXPERT
                split.append(parts(task_id, key, task.public.generation_attempts))
                start = time.process_time()
                generate_task(next(others), key)
                linear.append(time.process_time() - start)
                progress.advance(job)
            cuts = np.percentile(totals, [50, 95])
            means = [statistics.mean(s[k] for s in split) for k in range(2)]
            table.add_row(
                family,
                f"{statistics.mean(totals):.3f}",
                f"{cuts[0]:.3f}",
                f"{cuts[1]:.3f}",
                f"{max(totals):.3f}",
                str(sum(t > BUDGET_S for t in totals)),
                *(f"{m:.3f}" for m in means),
                f"{statistics.mean(linear):.3f}",
                f"{statistics.mean(totals) / statistics.mean(linear):.1f}x",
            )
            numbers[family] = {
                "tasks": len(totals),
                "mean_s": statistics.mean(totals),
                "p50_s": float(cuts[0]),
                "p95_s": float(cuts[1]),
                "max_s": max(totals),
                "over_budget": sum(t > BUDGET_S for t in totals),
                "term_means_s": means[0],
                "anchor_mc_s": means[1],
                "linear_s": statistics.mean(linear),
            }
    console.print(table)
    console.print(f"budget: {BUDGET_S} s of CPU per expert task")
    if args.json:
        parameters = {"per_family": args.per_family, "budget_s": BUDGET_S}
        write_result(args.json, "expert", parameters, {"families": numbers})


if __name__ == "__main__":
    main()
