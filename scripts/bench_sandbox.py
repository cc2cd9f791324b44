"""Benchmark: sandbox overhead per episode step.

For each backend, the median over N runs of open (stage the two task files) +
exec(`python -c pass`) + close, printed beside the bare host `python -c pass` time
measured in the same run (interleaved, so machine noise hits all alike). Toolchains
and images are built before timing starts.

    .venv/bin/python scripts/bench_sandbox.py [--runs 50] [--backends local docker]
        [--image IMAGE] [--json docs/benchmarks/sandbox.json]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402
from rich.table import Table  # noqa: E402

from causal_gym import generate_task, resolve_key  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.sandbox import SANDBOX_KINDS, SandboxLimits, make_sandbox  # noqa: E402
from scripts.bench_results import write_result  # noqa: E402


def one_cycle(kind: str, files: dict[str, bytes], image: str | None) -> float:
    started = time.perf_counter()
    box = make_sandbox(kind, SandboxLimits(), image)
    box.open(files)
    result = box.exec(["python", "-c", "pass"], 60)
    box.close()
    if not result.ok:
        raise RuntimeError(f"{kind}: python -c pass failed: {result.stderr[-300:]}")
    return time.perf_counter() - started


def bare() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--backends", nargs="+", default=list(SANDBOX_KINDS), choices=SANDBOX_KINDS)
    parser.add_argument(
        "--image", default=None, help="Docker base image (default python:3.11-slim)"
    )
    parser.add_argument(
        "--json", type=Path, help="write the numbers here (scripts/bench_results.py)"
    )
    args = parser.parse_args()
    console = Console(width=110)
    files = dict(generate_task("eval-v1:ate:0", resolve_key(environ={})).public.files)
    backends = []
    for kind in args.backends:
        try:
            one_cycle(kind, files, args.image)  # builds toolchains/images, warms caches
            backends.append(kind)
        except (OrchestratorError, RuntimeError) as exc:
            console.print(f"[yellow]skipping {kind}: {exc}[/yellow]")
    samples: dict[str, list[float]] = {kind: [] for kind in ["bare", *backends]}
    with Progress(console=console) as progress:
        job = progress.add_task("cycles", total=args.runs)
        for _ in range(args.runs):
            samples["bare"].append(bare())
            for kind in backends:
                samples[kind].append(one_cycle(kind, files, args.image))
            progress.advance(job)
    base = statistics.median(samples["bare"])
    table = Table(title=f"bench_sandbox ({args.runs} runs; open + exec(python -c pass) + close)")
    for col in ("backend", "median ms", "p90 ms", "x bare python -c pass"):
        table.add_column(col, justify="right")
    numbers = {}
    for kind, values in samples.items():
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        table.add_row(
            kind,
            f"{statistics.median(values) * 1000:.1f}",
            f"{p90 * 1000:.1f}",
            f"{statistics.median(values) / base:.2f}x",
        )
        numbers[kind] = {"median_s": statistics.median(values), "p90_s": p90}
    console.print(table)
    if args.json:
        parameters = {"runs": args.runs, "backends": backends, "image": args.image,
                      "root": os.geteuid() == 0}  # fmt: skip
        write_result(args.json, "sandbox", parameters, {"backends": numbers})


if __name__ == "__main__":
    main()
