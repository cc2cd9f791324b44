"""Benchmark: full task materialization versus a bare sample-and-write baseline.

For each task the baseline samples a standard-normal frame of the same shape (rows
x columns) and writes it with pandas' CSV writer at 4 decimals; "full" is
`generate_task` (derive, SCM, certificate, sampling, messiness, naming, CSV, README,
solvability on the staged bytes). A second, stricter baseline writes the same
frame with the generator's own fixed-format writer (pandas' float_format path is
slow, which flatters the first ratio). All are timed in this run, interleaved task
by task, so machine noise hits them alike. Target: full / baseline <= 2. Each
family's CPU seconds (this process and any child) are counted too: `--tier real`
times the first real train tasks of the families with a real tier (the covariate
families and the design families with a real table), whose target is at least 15
tasks per CPU-second.

    .venv/bin/python scripts/bench_generate.py [--per-family 300] [--namespace train]
        [--tier real] [--json docs/benchmarks/generate.json]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from causal_gym import generate_task, resolve_key  # noqa: E402
from causal_gym.generate.draw import tier_train_ids  # noqa: E402
from causal_gym.plan.tiers import Tier  # noqa: E402
from causal_gym.realdata.design_tables import design_families  # noqa: E402
from causal_gym.task_id import (  # noqa: E402
    EVAL_V1_FAMILIES,
    EVAL_V2_FAMILIES,
    FAMILIES,
    REAL_FAMILIES,
)
from scripts.bench_results import write_result  # noqa: E402


def cpu_seconds() -> float:
    """User plus system time of this process and of every child it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bare_baseline(n_rows: int, n_columns: int, seed: int) -> bytes:
    frame = pd.DataFrame(np.random.default_rng(seed).standard_normal((n_rows, n_columns)))
    return frame.to_csv(index=False, float_format="%.4f").encode()


def bare_own_writer(n_rows: int, n_columns: int, seed: int) -> bytes:
    """The same sample written with the generator's own fixed-format join (no pandas)."""
    values = np.random.default_rng(seed).standard_normal((n_columns, n_rows))
    cells = [[f"{v:.4f}" for v in column.tolist()] for column in values]
    header = ",".join(f"c{i}" for i in range(n_columns))
    body = "\n".join(",".join(row) for row in zip(*cells, strict=True))
    return f"{header}\n{body}\n".encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=300)
    parser.add_argument("--namespace", default="train", choices=("train", "eval-v1", "eval-v2"))
    parser.add_argument("--tier", choices=("real",), help="only the real tier's train tasks")
    parser.add_argument(
        "--json", type=Path, help="write the numbers here (scripts/bench_results.py)"
    )
    args = parser.parse_args()
    key = resolve_key(environ={})
    families = {"eval-v1": EVAL_V1_FAMILIES, "eval-v2": EVAL_V2_FAMILIES}.get(
        args.namespace, FAMILIES
    )
    ids = {f: [f"{args.namespace}:{f}:{i}" for i in range(args.per_family)] for f in families}
    if args.tier == "real":  # a family's tables load on its warm-up task, once per process
        families = (*REAL_FAMILIES, *design_families())
        ids = {f: tier_train_ids(key, f, args.per_family + 1, Tier.REAL) for f in families}
        for found in ids.values():
            generate_task(found.pop(0), key)
        ids = {f: found[-args.per_family :] for f, found in ids.items()}
    else:
        generate_task(f"{args.namespace}:{families[0]}:0", key)  # warm imports, not timed

    console = Console(width=120)
    rows = []
    with Progress(console=console) as progress:
        for family in families:
            job = progress.add_task(f"{family}", total=args.per_family)
            full_s = base_s = own_s = cpu_s = 0.0
            attempts = []
            for i, task_id in enumerate(ids[family]):
                c0 = cpu_seconds()
                t0 = time.perf_counter()
                task = generate_task(task_id, key)
                t1 = time.perf_counter()
                cpu_s += cpu_seconds() - c0
                bare_baseline(task.public.n_rows, len(task.public.columns), i)
                t2 = time.perf_counter()
                bare_own_writer(task.public.n_rows, len(task.public.columns), i)
                t3 = time.perf_counter()
                full_s += t1 - t0
                base_s += t2 - t1
                own_s += t3 - t2
                attempts.append(task.public.generation_attempts)
                progress.advance(job)
            rows.append(
                (family, args.per_family, full_s, base_s, own_s, statistics.mean(attempts), cpu_s)
            )

    tier = f", {args.tier} tier" if args.tier else ""
    title = f"bench_generate ({args.namespace}{tier}, {args.per_family} tasks per family)"
    table = Table(title=title)
    for col in (
        "family",
        "tasks",
        "full tasks/s",
        "tasks/CPU-s",
        "baseline tasks/s",
        "full/baseline",
        "full/own-writer",
        "attempts",
    ):
        table.add_column(col, justify="right")
    for family, n, full_s, base_s, own_s, mean_attempts, cpu_s in rows:
        table.add_row(
            family,
            str(n),
            f"{n / full_s:.1f}",
            f"{n / cpu_s:.1f}",
            f"{n / base_s:.1f}",
            f"{full_s / base_s:.2f}x",
            f"{full_s / own_s:.2f}x",
            f"{mean_attempts:.2f}",
        )
    total_full = sum(r[2] for r in rows)
    total_base = sum(r[3] for r in rows)
    total_own = sum(r[4] for r in rows)
    total_n = sum(r[1] for r in rows)
    total_cpu = sum(r[6] for r in rows)
    table.add_row(
        "all",
        str(total_n),
        f"{total_n / total_full:.1f}",
        f"{total_n / total_cpu:.1f}",
        f"{total_n / total_base:.1f}",
        f"{total_full / total_base:.2f}x",
        f"{total_full / total_own:.2f}x",
        "",
    )
    console.print(table)
    verdict = "meets" if total_full / total_base <= 2.0 else "MISSES"
    console.print(
        f"full materialization costs {total_full / total_base:.2f}x the bare baseline "
        f"({verdict} the 2x target); {total_full / total_own:.2f}x a baseline written "
        "with the generator's own CSV writer"
    )
    if args.tier == "real":
        rate = total_n / total_cpu
        verdict = "meets" if rate >= 15 else "MISSES"
        console.print(f"the real tier: {rate:.1f} tasks per CPU-second ({verdict} the 15 target)")
    if args.json:
        write_result(
            args.json,
            "generate",
            {"per_family": args.per_family, "namespace": args.namespace, "tier": args.tier},
            {
                "families": {
                    family: {
                        "tasks": n,
                        "full_s": full_s,
                        "baseline_s": base_s,
                        "own_writer_s": own_s,
                        "mean_attempts": mean_attempts,
                        "cpu_s": cpu_s,
                    }
                    for family, n, full_s, base_s, own_s, mean_attempts, cpu_s in rows
                }
            },
        )


if __name__ == "__main__":
    main()
