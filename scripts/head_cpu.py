"""Where a running scale benchmark spends its CPU, per finished episode.

    .venv/bin/python scripts/head_cpu.py RESULTS_JSONL [--seconds 480] [--json PATH]

Attach it to a `bench_run.py scale` run while the run is dispatching and finishing
episodes (the run prints its output folder; RESULTS_JSONL is that folder's
results.jsonl). Over the window it reads every process's CPU time from /proc twice and
counts the records appended in between, then sorts the CPU by role: the driver (the
dispatcher), the task generators, the recorder, Ray's GCS and raylets, the sandbox
actors, and everything else on the machine. Per finished episode, that is what the
head spends (driver + generators + recorder + GCS) and what the workers spend, so a
cluster's capacity follows from the head's cores (docs/pages/runs.md).

It only reads /proc; all the cluster's nodes must be on this machine (as in the
benchmark's `--nodes 3`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.bench_results import write_result

HEAD = ("driver", "generators", "recorder", "gcs")
TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def role(cmdline: bytes) -> str:
    if cmdline.startswith(b"ray::TaskGenerator"):
        return "generators"
    if cmdline.startswith(b"ray::Recorder"):
        return "recorder"
    if cmdline.startswith((b"ray::EpisodeWorker", b"ray::IDLE")):
        return "sandbox_actors"
    if b"bench_run.py" in cmdline or b"causal-gym-run" in cmdline:
        return "driver"
    if b"gcs_server" in cmdline:
        return "gcs"
    if b"/raylet" in cmdline:
        return "raylets"
    return "other"


def cpu_by_pid() -> dict[int, tuple[float, str]]:
    found: dict[int, tuple[float, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()[:300]
        except OSError:
            continue
        found[int(entry)] = ((int(stat[11]) + int(stat[12])) * TICK_S, role(cmdline))
    return found


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def measure(results: Path, seconds: float) -> dict[str, float | dict[str, float]]:
    before, records, started = cpu_by_pid(), lines(results), time.monotonic()
    time.sleep(seconds)
    after, records, window = cpu_by_pid(), lines(results) - records, time.monotonic() - started
    spent: dict[str, float] = {}
    for pid, (cpu_s, name) in after.items():
        earlier = before.get(pid)
        spent[name] = spent.get(name, 0.0) + cpu_s - (earlier[0] if earlier else 0.0)
    per_episode = {name: 1000 * s / max(records, 1) for name, s in spent.items()}
    return {
        "window_s": window,
        "records": records,
        "records_per_s": records / window,
        "cores": {name: s / window for name, s in spent.items()},
        "cpu_ms_per_episode": per_episode,
        "head_cpu_ms_per_episode": sum(per_episode.get(name, 0.0) for name in HEAD),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the running benchmark's results.jsonl")
    parser.add_argument("--seconds", type=float, default=480.0)
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args()
    if not args.results.is_file():
        print(
            f"head_cpu.py: {args.results} is not a file (give a running benchmark's results.jsonl)",
            file=sys.stderr,
        )
        return 2
    result = measure(args.results, args.seconds)
    for name, value in sorted(result.items()):
        print(f"{name}: {value}")
    if args.json:
        write_result(args.json, "run-scale-cpu", {"seconds": args.seconds}, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
