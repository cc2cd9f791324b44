"""Throughput of a trainer stream over HTTP, against bare generation in the same run.

    .venv/bin/python scripts/bench_stream.py [--tasks 300] [--latency 200] [--json PATH]

`--json PATH` adds this run to the runs in PATH (a new file if there is none), so the
docs' table of runs side by side (docs/benchmarks/stream.json) is built one
invocation at a time (scripts/bench_results.py).

1. bare: generate train tasks of the default mix (ate, adjustment, null_detect with
   their expert share, as `stream start` serves them) in this process, and linear
   ones alone: tasks per CPU-second.
2. task mode: a real stream (`causal-gym-run stream start`, its own embedded Ray) with
   one supply worker, then with two; a lean consumer on the same machine runs three
   trainer loops at once (each pulls a batch of 32 and scores it), so the service
   always has demand. Scored tasks per head CPU-second (the CPU of the
   service's whole process tree: the HTTP front, the supply workers, Ray's daemons)
   and per wall second; the two-worker/one-worker ratio of the wall rates.
3. HTTP overhead, p50 and p99: a pull of one task that is ready; a score right after
   it (it waits for the make that pull started on its worker: one thread per worker);
   a score with nothing being made (its truth is at hand: no generation).

Every stream makes its own key, and the share of expert tasks (about three linear
ones each) varies with it, so each run is held against bare generation of the very
tasks it served (its key exported afterwards): head CPU over bare CPU, and wall
throughput in cores' worth of bare generation. Wall-clock rates on this 2-core machine
still swing between identical runs; quote the same-run ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import httpx  # noqa: E402

from causal_gym.make import generate_task  # noqa: E402
from causal_gym.rng_keys.keys import DerivationKey, parse_key_hex  # noqa: E402
from scripts.bench_results import append_run  # noqa: E402
from tests.support.streams import Stream, start_stream  # noqa: E402

FAMILIES = ("ate", "adjustment", "null_detect")
ANSWERS = {
    "ate": {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0},
    "adjustment": {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0, "adjustment_set": []},
    "null_detect": {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0,
                    "effect_probability": 0.65},
}  # fmt: skip
_LINE = re.compile(rb'"handle":"([A-Za-z0-9_-]+)","family":"(\w+)"')


def bare(count: int, linear_only: bool) -> float:
    """Tasks per CPU-second of generation in this process (fresh key, train ids)."""
    key = DerivationKey(secrets.token_bytes(32), "bench")
    generate_task("train:ate:999999", key)  # imports outside the timing
    ids = (f"train:{FAMILIES[i % 3]}:{i // 3}" for i in range(10**9))
    done, cpu = 0, 0.0
    for task_id in ids:
        started = time.process_time()
        task = generate_task(task_id, key)
        spent = time.process_time() - started
        if linear_only and task.public.tier.value == "expert":
            continue
        done, cpu = done + 1, cpu + spent
        if done == count:
            return done / cpu
    raise AssertionError("unreachable")


def bare_ids(key: DerivationKey, start: int, count: int) -> float:
    """Tasks per CPU-second of generating ids start .. start + count of the cycle a
    one-worker stream serves (train:ate:0, train:adjustment:0, ...) under `key`."""
    generate_task("train:ate:999999", key)
    cpu = 0.0
    for position in range(start, start + count):
        task_id = f"train:{FAMILIES[position % 3]}:{position // 3}"
        started = time.process_time()
        generate_task(task_id, key)
        cpu += time.process_time() - started
    return count / cpu


def tree_cpu(root: int) -> float:
    """utime + stime of `root` and every live descendant, in seconds."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    total = 0.0
    for pid, spent in times.items():
        current = pid
        while current > 1 and current != root:
            current = parents.get(current, 0)
        if current == root:
            total += spent
    return total


def consume(
    stream: Stream, token: str, count: int, batch: int, loops: int = 3
) -> tuple[float, float]:
    """Pull and score `count` tasks with `loops` trainer loops at once (each pulls a
    batch, then scores it), so the service always has demand; returns (head
    CPU-seconds, wall seconds). The consumer reads only each line's handle and family:
    it measures the service, not pydantic on the client."""
    headers = {"Authorization": f"Bearer {token}"}

    async def run() -> None:
        left = [count]
        async with httpx.AsyncClient(base_url=stream.url, headers=headers, timeout=600) as http:

            async def loop() -> None:
                while left[0] > 0:
                    n = min(batch, left[0])
                    left[0] -= n
                    async with http.stream("POST", "/v1/tasks/pull", json={"n": n}) as reply:
                        lines = [line async for line in reply.aiter_lines() if line]
                    for line in lines:
                        match = _LINE.search(line.encode())
                        assert match is not None
                        body = {"handle": match.group(1).decode(),
                                "submission": ANSWERS[match.group(2).decode()]}  # fmt: skip
                        (await http.post("/v1/tasks/score", json=body)).raise_for_status()

            await asyncio.gather(*(loop() for _ in range(loops)))

    cpu0, wall0 = tree_cpu(stream.pid), time.monotonic()
    asyncio.run(run())
    return tree_cpu(stream.pid) - cpu0, time.monotonic() - wall0


def latencies(stream: Stream, token: str, count: int) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {token}"}
    pulls, scores, idle = [], [], []
    with httpx.Client(base_url=stream.url, headers=headers, timeout=600) as http:
        for _ in range(count):
            time.sleep(0.05)  # the prefetch has a task ready
            started = time.perf_counter()
            reply = http.post("/v1/tasks/pull", json={"n": 1})
            pulls.append(time.perf_counter() - started)
            match = _LINE.search(reply.content)
            assert match is not None
            body = {
                "handle": match.group(1).decode(),
                "submission": ANSWERS[match.group(2).decode()],
            }
            started = time.perf_counter()
            http.post("/v1/tasks/score", json=body).raise_for_status()
            scores.append(time.perf_counter() - started)

        # a score alone: a batch pulled, the prefetch left to finish, then each scored
        # with nothing being made (above, a score waits for the make in progress on
        # its worker, which the pull before it started)
        batch = [_LINE.search(line.encode()) for line in http.post(
            "/v1/tasks/pull", json={"n": min(count, 64)}).text.splitlines() if line]  # fmt: skip
        time.sleep(3.0)
        for match in batch:
            assert match is not None
            body = {"handle": match.group(1).decode(),
                    "submission": ANSWERS[match.group(2).decode()]}  # fmt: skip
            started = time.perf_counter()
            http.post("/v1/tasks/score", json=body).raise_for_status()
            idle.append(time.perf_counter() - started)

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "pull_p50_ms": pct(pulls, 0.5), "pull_p99_ms": pct(pulls, 0.99),
        "score_p50_ms": pct(scores, 0.5), "score_p99_ms": pct(scores, 0.99),
        "idle_score_p50_ms": pct(idle, 0.5), "idle_score_p99_ms": pct(idle, 0.99),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--latency", type=int, default=200)
    parser.add_argument(
        "--json", type=Path, help="add this run to the runs in this file (bench_results.py)"
    )
    args = parser.parse_args()

    mix_per_cpu = bare(args.tasks, linear_only=False)
    linear_per_cpu = bare(args.tasks, linear_only=True)
    result: dict[str, float] = {
        "bare_mix_tasks_per_cpu_s": mix_per_cpu,
        "bare_linear_tasks_per_cpu_s": linear_per_cpu,
    }
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as base:
        cores = sorted(os.sched_getaffinity(0))
        # (label, workers, pinned): the CPU figure with the service alone on one core and
        # this consumer on another (in a deployment the trainer runs elsewhere; here it
        # would contend); the wall ratio with both unpinned, as a machine runs them.
        for label, workers, pinned in (("w1", 1, True), ("w1free", 1, False), ("w2", 2, False)):
            if pinned and len(cores) > 1:
                os.sched_setaffinity(0, {cores[-1]})  # the service inherits it
            stream = start_stream(f"bench-{label}", Path(base) / label, "--workers", str(workers))
            if pinned and len(cores) > 1:
                os.sched_setaffinity(0, set(cores[:-1]))
            try:
                token = stream.mint("bench")
                consume(stream, token, 2 * args.batch, args.batch)  # warm: imports, prefetch
                before = stream.operator().status().tasks_generated
                cpu, wall = consume(stream, token, args.tasks, args.batch)
                made = stream.operator().status().tasks_generated - before
                os.sched_setaffinity(0, set(cores))
                result[f"{label}_scored_per_head_cpu_s"] = args.tasks / cpu
                result[f"{label}_scored_per_wall_s"] = args.tasks / wall
                # the very tasks it served, generated bare under its exported key: the
                # same-run yardstick (keys differ between streams, and with them the
                # share of expert tasks, which cost about three linear ones)
                key_file = Path(base) / f"{label}.key"
                assert stream.cli("export-key", "--to", str(key_file)).returncode == 0
                key = parse_key_hex(key_file.read_text(), "export")
                same = bare_ids(key, before, made)
                result[f"{label}_same_tasks_bare_per_cpu_s"] = same
                # wall throughput in cores' worth of bare generation
                result[f"{label}_cores_of_generation"] = (args.tasks / wall) / same
                if pinned:
                    result["w1_head_vs_bare_same_tasks"] = (args.tasks / cpu) / same
                    result |= latencies(stream, token, args.latency)
            finally:
                os.sched_setaffinity(0, set(cores))
                stream.stop()
    two_vs_one = result["w2_cores_of_generation"] / result["w1free_cores_of_generation"]
    result["two_workers_vs_one_wall"] = two_vs_one
    result["w1_head_cpu_vs_bare_mix"] = result["w1_scored_per_head_cpu_s"] / mix_per_cpu
    print(json.dumps(result, indent=2))
    print(
        f"default mix: {result['w1_scored_per_head_cpu_s']:.1f} scored tasks per head "
        f"CPU-second with one worker (target >= 20; bare generation {mix_per_cpu:.1f}/CPU-s, "
        f"linear alone {linear_per_cpu:.1f}/CPU-s, ratio {result['w1_head_cpu_vs_bare_mix']:.2f}); "
        f"the same tasks bare: {result['w1_same_tasks_bare_per_cpu_s']:.1f}/CPU-s (head/bare "
        f"{result['w1_head_vs_bare_same_tasks']:.2f}); two workers {two_vs_one:.2f}x one in "
        f"wall throughput, each in cores' worth of bare generation of its own tasks "
        f"({result['w2_cores_of_generation']:.2f} vs {result['w1free_cores_of_generation']:.2f}; "
        f"target >= 1.7); "
        f"HTTP p50/p99: pull {result['pull_p50_ms']:.1f}/{result['pull_p99_ms']:.1f} ms, "
        f"score {result['score_p50_ms']:.1f}/{result['score_p99_ms']:.1f} ms behind a make, "
        f"{result['idle_score_p50_ms']:.1f}/{result['idle_score_p99_ms']:.1f} ms alone"
    )
    if args.json:
        parameters = {"tasks": args.tasks, "batch": args.batch, "latency": args.latency}
        runs = append_run(args.json, "stream", parameters, result).results["runs"]
        print(f"run {len(runs)} of {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
