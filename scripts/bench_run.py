"""Benchmarks of the Ray runner, each ratio measured in the same run.

    .venv/bin/python scripts/bench_run.py throughput [-n 500]   # eval-v1, reference agent
    .venv/bin/python scripts/bench_run.py versus-vf  [-n 40]    # same tasks, same server, vf-eval
    .venv/bin/python scripts/bench_run.py scale [--concurrency 1000] [--turn-s 10] [--turns 12]
        [--nodes 3]   # a head and two `ray start` worker nodes on this machine

Each takes `--json PATH` to write its numbers (scripts/bench_results.py); the docs'
table reads docs/benchmarks/run_throughput.json, run_versus_vf.json and run_scale.json.

throughput: episodes per second; the runner's overhead per episode (dispatch to result
at the driver, minus the episode's own wall time); parallel efficiency, n episodes x
the wall time of one episode run alone (a serial calibration run first) over (elapsed
time x CPUs); head RSS (driver + head actors).
Targets: overhead under 50 ms, efficiency at least 0.85 on 2 cores.

versus-vf: the same eval-v1 tasks through `vf-eval causal_gym` (subprocess runtime)
and through `causal-gym-run`, both driven by one local scripted chat-completions
server that replays the reference analysis as tool calls, at the same concurrency.
Target: causal-gym-run at least 3x faster.

scale: concurrency-many simulated model-bound episodes at once (each turn waits
`turn_s`, the model's latency); throughput against the ideal, concurrency / episode
time, from the first start to the last end; how long the slots took to fill and how
busy they stayed until the last dispatch (scripts/scale_measures.py); dispatch
overhead; the head's memory, as RSS of the driver and the head actors. Targets
(10,000 in flight on three nodes): at least 0.9, overhead p50 under 20 ms, head RSS
under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402

from causal_gym.rng_keys.keys import resolve_key  # noqa: E402
from orchestrator.records.read_back import read_records  # noqa: E402
from orchestrator.run.config import load_config  # noqa: E402
from orchestrator.run.session import execute  # noqa: E402
from scripts.bench_results import write_result  # noqa: E402

VENV_BIN = Path(sys.executable).parent
HEAD_TITLES = (b"ray::TaskGenerator", b"ray::Recorder")


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def head_pids() -> list[int]:
    pids = [os.getpid()]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if any(title in cmdline for title in HEAD_TITLES):
                pids.append(int(entry))
    return pids


class RssSampler:
    """The peak of (driver + head actors) RSS, sampled twice a second."""

    def __init__(self) -> None:
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, sum(rss_mb(pid) for pid in head_pids()))
            self._stop.wait(0.5)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_in_process(overrides: dict[str, Any]) -> tuple[float, Path, float]:
    out = Path(tempfile.mkdtemp(prefix="bench-run-")) / "run"
    config = load_config(None, {**overrides, "out": str(out)})
    key = resolve_key(environ={})
    started = time.monotonic()
    with RssSampler() as rss:
        execute(config, key, resume=False, console=Console(stderr=True))
    return time.monotonic() - started, out, rss.peak


def throughput(n: int, concurrency: int, calibration: int) -> dict[str, Any]:
    """A serial run first (concurrency 1) measures one episode's wall time alone; the
    parallel run's efficiency is the speed-up over that, per CPU."""
    _, serial_out, _ = run_in_process(
        {"split": "eval-v1", "per_family": calibration, "start": 100, "agent": "reference",
         "concurrency": 1}
    )  # fmt: skip
    # the first episode warms the actor and the sandbox's caches (26 s once, against
    # about 2 s for the rest): one episode alone is the mean of the warm ones
    alone = [r.wall_s for r in read_records(serial_out) if r.final][1:]
    t1 = sum(alone) / len(alone)
    elapsed, out, rss = run_in_process(
        {"split": "eval-v1", "n": n, "agent": "reference", "concurrency": concurrency}
    )
    records = [r for r in read_records(out) if r.final]
    overheads = sorted(r.overhead_s for r in records)
    cpus = os.cpu_count() or 1
    result = {
        "episodes": len(records),
        "elapsed_s": elapsed,
        "episodes_per_s": len(records) / elapsed,
        "episode_alone_s": t1,
        "overhead_p50_ms": 1000 * overheads[len(overheads) // 2],
        "overhead_mean_ms": 1000 * sum(overheads) / len(overheads),
        "overhead_p90_ms": 1000 * overheads[int(len(overheads) * 0.9)],
        "parallel_efficiency": len(records) * t1 / (elapsed * cpus),
        "head_rss_mb": rss,
        "cpus": cpus,
        "all_submitted": all(r.submitted for r in records),
        "mean_reward": sum(r.reward for r in records) / len(records),
    }
    print(json.dumps(result, indent=2))
    print(
        f"overhead per episode p50 {result['overhead_p50_ms']:.1f} ms (target < 50); parallel "
        f"efficiency {result['parallel_efficiency']:.3f} on {cpus} CPUs (target >= 0.85): "
        f"{len(records)} episodes in {elapsed:.0f} s against {t1:.2f} s for one alone; "
        f"head RSS {rss:.0f} MB"
    )
    return result


EPISODES_PER_ACTOR = 250  # scale: the episodes one sandbox actor runs at once


def scale(
    concurrency: int,
    turn_s: float,
    turns: int,
    rounds: int,
    nodes: int = 1,
    generators: int = 2,
    per_actor: int = EPISODES_PER_ACTOR,
) -> dict[str, Any]:
    """`nodes` 1: the embedded Ray; 3: a real cluster on this machine, a head with the
    head resource and no CPUs and two `ray start` worker nodes (the sandbox actors all
    land on those), started and stopped here."""
    from scripts.scale_measures import occupancy, wave_widths
    from tests.support.ray_cluster import start_cluster

    n = concurrency * rounds
    overrides: dict[str, Any] = {
        "split": "train",
        "n": n,
        "agent": f"simulated:{turn_s:g}:{turns}",
        "concurrency": concurrency,
        "episodes_per_actor": per_actor,
        "cpus_per_episode": 0.001,
        "generators": generators,
        "episode_timeout_s": turn_s * turns * 3,
    }
    cluster = None
    if nodes > 1:
        actors_cpus = concurrency * 0.001 + per_actor * 0.001  # a spare actor's worth
        worker_cpus = max(2, int(actors_cpus / (nodes - 1)) + 2)
        cluster = start_cluster(worker_cpus=worker_cpus, workers=nodes - 1)
        os.environ.update({"RAY_AUTH_MODE": "token"})
        overrides["address"] = cluster.address
    try:
        elapsed, out, rss = run_in_process(overrides)
    finally:
        if cluster is not None:
            cluster.stop()
    found = list(read_records(out))
    records = [r for r in found if r.final]
    episode_s = sum(r.wall_s for r in records) / len(records)
    ideal = concurrency / episode_s
    # the dispatch window: first episode's start to the last one's end (Ray's start-up
    # and the report are not dispatching; the end-to-end figure includes them)
    window = max(r.finished_at for r in records) - min(r.finished_at - r.wall_s for r in records)
    actual = len(records) / window
    held = occupancy(found, concurrency)
    overheads = sorted(r.overhead_s for r in records)
    result = {
        "episodes": len(records),
        "attempts": len(found),
        "concurrency": concurrency,
        "nodes": nodes,
        "generators": generators,
        "mean_episode_s": episode_s,
        "window_s": window,
        "elapsed_s": elapsed,
        "throughput_per_s": actual,
        "ideal_per_s": ideal,
        "ratio": actual / ideal,
        "ratio_end_to_end": len(records) / elapsed / ideal,
        "fill_s": held.fill_s,
        "held_s": held.held_s,
        "busy_share": held.busy_share,
        "wave_widths_s": list(wave_widths(records, concurrency)),
        "overhead_p50_ms": 1000 * overheads[len(overheads) // 2],
        "overhead_p90_ms": 1000 * overheads[int(len(overheads) * 0.9)],
        "head_rss_mb": rss,
        "submitted": sum(r.submitted for r in records),
    }
    print(json.dumps(result, indent=2))
    print(
        f"{concurrency} concurrent episodes on {nodes} node(s): {actual:.2f} episodes/s "
        f"against an ideal of {ideal:.2f} ({actual / ideal:.3f} first start to last end, "
        f"target >= 0.9; slots filled in {held.fill_s:.0f} s, then {held.busy_share:.4f} "
        f"busy for {held.held_s:.0f} s); dispatch overhead p50 "
        f"{result['overhead_p50_ms']:.1f} ms (target < 20); head RSS (driver + head actors) "
        f"{rss:.0f} MB (target < 2048)"
    )
    return result


def versus_vf(n: int, concurrency: int) -> dict[str, Any]:
    from tests.support.openai_server import ScriptedOpenAIServer, ServerScript
    from tests.support.replay import replay_reference

    key_free = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    timings: dict[str, float] = {}
    with ScriptedOpenAIServer(ServerScript(replay_reference)) as server:
        env = {**key_free, "SCRIPTED_API_KEY": "sk-scripted", "PRIME_RUNS_MODE": "disabled"}
        env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
        out = Path(tempfile.mkdtemp(prefix="bench-vf-"))
        started = time.monotonic()
        vf = subprocess.run(
            [
                str(VENV_BIN / "vf-eval"), "causal_gym", "--env.agent.harness.id", "bash",
                "-m", "scripted", "--client.base-url", server.base_url,
                "--client.api-key-var", "SCRIPTED_API_KEY", "--no-push", "--no-rich",
                "-o", str(out / "vf"), "--run.name", "run", "-n", str(n), "-c", str(concurrency),
                "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "eval-v1",
            ],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        timings["vf_eval_s"] = time.monotonic() - started
        if vf.returncode != 0:
            raise SystemExit(f"vf-eval failed: {vf.stderr[-2000:]}")
        started = time.monotonic()
        ours = subprocess.run(
            [
                str(VENV_BIN / "causal-gym-run"), "--split", "eval-v1", "-n", str(n),
                "--agent", "openai", "--base-url", server.base_url, "--model", "scripted",
                "--api-key-env", "SCRIPTED_API_KEY", "--concurrency", str(concurrency),
                "--out", str(out / "ours"),
            ],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        timings["causal_gym_run_s"] = time.monotonic() - started
        if ours.returncode != 0:
            raise SystemExit(f"causal-gym-run failed: {ours.stderr[-2000:]}")
    traces = (out / "vf" / "run" / "traces.jsonl").read_text().splitlines()
    vf_rewards = [json.loads(t)["traces"][0]["rewards"]["reward"]["score"] for t in traces]
    ours_final = [r for r in read_records(out / "ours") if r.final]
    result = {
        "tasks": n,
        "concurrency": concurrency,
        **timings,
        "speedup": timings["vf_eval_s"] / timings["causal_gym_run_s"],
        "vf_mean_reward": sum(vf_rewards) / len(vf_rewards),
        "ours_mean_reward": sum(r.reward for r in ours_final) / len(ours_final),
    }
    print(json.dumps(result, indent=2))
    print(f"causal-gym-run is {result['speedup']:.2f}x faster than vf-eval (target >= 3)")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="which", required=True)
    json_help = "write the numbers here (scripts/bench_results.py)"
    one = sub.add_parser("throughput")
    one.add_argument("--json", type=Path, help=json_help)
    one.add_argument("-n", type=int, default=500)
    one.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    one.add_argument("--calibration", type=int, default=10, help="serial tasks per family")
    two = sub.add_parser("versus-vf")
    two.add_argument("--json", type=Path, help=json_help)
    two.add_argument("-n", type=int, default=40)
    two.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    three = sub.add_parser("scale")
    three.add_argument("--json", type=Path, help=json_help)
    three.add_argument("--concurrency", type=int, default=1000)
    three.add_argument("--turn-s", type=float, default=10.0)
    three.add_argument("--turns", type=int, default=12)
    three.add_argument("--rounds", type=int, default=3)
    three.add_argument("--nodes", type=int, default=1, help="1: embedded Ray; 3: head + 2 workers")
    three.add_argument("--generators", type=int, default=2)
    three.add_argument("--episodes-per-actor", type=int, default=EPISODES_PER_ACTOR)
    args = parser.parse_args()
    parameters: dict[str, Any]
    if args.which == "throughput":
        result = throughput(args.n, args.concurrency, args.calibration)
        parameters = {"n": args.n, "concurrency": args.concurrency,
                      "calibration": args.calibration}  # fmt: skip
    elif args.which == "versus-vf":
        result = versus_vf(args.n, args.concurrency)
        parameters = {"n": args.n, "concurrency": args.concurrency}
    else:
        result = scale(
            args.concurrency, args.turn_s, args.turns, args.rounds, args.nodes,
            args.generators, args.episodes_per_actor,
        )  # fmt: skip
        parameters = {"concurrency": args.concurrency, "turn_s": args.turn_s,
                      "turns": args.turns, "rounds": args.rounds, "nodes": args.nodes,
                      "generators": args.generators,
                      "episodes_per_actor": args.episodes_per_actor}  # fmt: skip
    if args.json:
        write_result(args.json, f"run-{args.which}", parameters, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
