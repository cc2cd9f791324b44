"""How fast the command-line tools answer, against a bare interpreter in the same run.

Times `python -c pass`, `causal-gym --help`, `causal-gym-run --help` and
`python -c "import causal_gym"` (median of N runs each, interleaved so machine noise
hits every command alike) and prints each as a ratio to the bare interpreter.
Target: both `--help` commands within 10x of `python -c pass`.

    .venv/bin/python scripts/bench_cli.py [--runs 30] [--json docs/benchmarks/cli.json]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scripts.bench_results import write_result  # noqa: E402

BIN = Path(sys.executable).parent
TARGET_RATIO = 10.0


def commands() -> dict[str, list[str]]:
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "causal-gym --help": [str(BIN / "causal-gym"), "--help"],
        "causal-gym-run --help": [str(BIN / "causal-gym-run"), "--help"],
        "python -c 'import causal_gym'": [sys.executable, "-c", "import causal_gym"],
    }


def time_once(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument(
        "--json", type=Path, help="write the numbers here (scripts/bench_results.py)"
    )
    args = parser.parse_args()
    cmds = commands()
    for argv in cmds.values():  # warm the page cache and the .pyc files
        time_once(argv)
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(args.runs):
        for name, argv in cmds.items():
            samples[name].append(time_once(argv))
    bare = statistics.median(samples["python -c pass"])
    print(f"{'command':32} {'median':>9} {'p90':>9} {'vs bare':>8}")
    worst = 0.0
    numbers = {}
    for name, values in samples.items():
        median = statistics.median(values)
        p90 = statistics.quantiles(values, n=10)[-1]
        ratio = median / bare
        if "--help" in name:
            worst = max(worst, ratio)
        print(f"{name:32} {median * 1000:7.1f}ms {p90 * 1000:7.1f}ms {ratio:7.2f}x")
        numbers[name] = {"median_s": median, "p90_s": p90}
    if args.json:
        write_result(args.json, "cli", {"runs": args.runs}, {"commands": numbers})
    verdict = "meets" if worst <= TARGET_RATIO else "MISSES"
    print(f"slowest --help is {worst:.2f}x bare python: {verdict} the {TARGET_RATIO:g}x target")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
