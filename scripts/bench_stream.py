"""Throughput of a trainer stream, against the bare generation rate in the same run.

    .venv/bin/python scripts/bench_stream.py [--tasks 600] [--episodes 60]

1. bare: generate fresh train tasks in this process (one core): tasks per second.
2. task mode: a stream on a local Ray cluster (a head with the head resource), a
   client pulling batches and scoring every task: sustained tasks per second. The
   stream is one process, so the target is 0.8 of the bare rate (per head core).
3. episode mode: the same stream running episodes against a local scripted
   chat-completions server that replays the reference analysis as tool calls:
   scored episodes per second delivered to the consumer.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# One BLAS thread, as in Ray's workers: bare and stream generation do the same work.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

from causal_gym.generate import generate_task  # noqa: E402
from causal_gym.rng_keys.keys import DerivationKey  # noqa: E402
from orchestrator.agents.openai_policy import OpenAIPolicyConfig  # noqa: E402
from tests.support.openai_server import ScriptedOpenAIServer, ServerScript  # noqa: E402
from tests.support.ray_cluster import start_cluster  # noqa: E402
from tests.support.replay import replay_reference  # noqa: E402

RUN = str(Path(sys.executable).with_name("causal-gym-run"))
ANSWER = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
PREFETCH_WARM = 4


def bare_rate(count: int) -> tuple[float, float]:
    """Tasks per wall second and per CPU second of generating in this process."""
    key = DerivationKey(secrets.token_bytes(32), "bench")
    generate_task("train:ate:999999", key)  # imports (statsmodels) outside the timing
    started, cpu = time.monotonic(), time.process_time()
    for index in range(count):
        generate_task(f"train:{('ate', 'adjustment', 'null_detect')[index % 3]}:{index // 3}", key)
    return count / (time.monotonic() - started), count / (time.process_time() - cpu)


def stream_pid() -> int:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if b"ray::StreamService" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    return int(entry)
            except OSError:
                continue
    raise SystemExit("the stream's process was not found")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=600)
    parser.add_argument("--episodes", type=int, default=60)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()

    cluster = start_cluster(head_cpus=2, worker_cpus=0)
    os.environ["RAY_AUTH_MODE"] = "token"
    try:
        started = subprocess.run(
            [RUN, "stream", "start", "bench", "--address", cluster.address, "--concurrency", "2",
             "--episodes-per-actor", "2"],
            env=cluster.env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if started.returncode != 0:
            raise SystemExit(started.stderr)
        from orchestrator.stream import EpisodeSettings, StreamClient

        client = StreamClient("bench", address=cluster.address)
        client.pull_tasks(4)  # warm the actor
        # Wall-clock rates on this machine swing +-30% between identical runs, so the
        # ratio is taken per CPU-second: tasks per CPU-second of the stream's process
        # (its utime + stime over the whole phase) against tasks per CPU-second of bare
        # generation, the two measured in alternating rounds while the cluster is up.
        pid = stream_pid()
        client.pull_tasks(PREFETCH_WARM)  # the stream's read-ahead is full from here on
        time.sleep(3)
        rounds, per_round = 4, max(args.batch, args.tasks // 4)
        cpu0, done, stream_wall, bare_tasks, bare_wall, bare_cpu = (
            cpu_seconds(pid),
            0,
            0.0,
            0,
            0.0,
            0.0,
        )
        for _ in range(rounds):
            wall, cpu = bare_rate(per_round)
            bare_tasks += per_round
            bare_wall += per_round / wall
            bare_cpu += per_round / cpu
            t0, got = time.monotonic(), 0
            while got < per_round:
                for task in client.pull_tasks(min(args.batch, per_round - got)):
                    client.score(task.handle, ANSWER)
                    got += 1
            stream_wall += time.monotonic() - t0
            done += got
        time.sleep(3)  # the read-ahead refills to where it started
        stream_per_cpu = done / (cpu_seconds(pid) - cpu0)
        task_rate = done / stream_wall
        bare, bare_per_cpu = bare_tasks / bare_wall, bare_tasks / bare_cpu
        with ScriptedOpenAIServer(ServerScript(replay_reference)) as server:
            endpoint = OpenAIPolicyConfig(base_url=server.base_url, model="scripted")
            client.configure(EpisodeSettings(endpoint=endpoint, batch_size=4, buffer_factor=2))
            client.pull_episodes(1, timeout_s=300)  # warm: sandboxes, toolchain
            t1, got, submitted = time.monotonic(), 0, 0
            while got < args.episodes:
                batch = client.pull_episodes(4, timeout_s=300)
                got += len(batch)
                submitted += sum(r.status == "submitted" for r in batch)
            episode_rate = got / (time.monotonic() - t1)
        subprocess.run(
            [RUN, "stream", "stop", "bench", "--address", cluster.address],
            env=cluster.env, capture_output=True, timeout=120,
        )  # fmt: skip
    finally:
        cluster.stop()
    result = {
        "bare_tasks_per_s": bare,
        "bare_tasks_per_cpu_s": bare_per_cpu,
        "task_mode_tasks_per_s": task_rate,
        "task_mode_tasks_per_stream_cpu_s": stream_per_cpu,
        "task_mode_vs_bare_per_core": stream_per_cpu / bare_per_cpu,
        "task_mode_vs_bare_wall": task_rate / bare,
        "episode_mode_episodes_per_s": episode_rate,
        "episodes_submitted": submitted,
        "episodes": got,
    }
    print(json.dumps(result, indent=2))
    print(
        f"task mode {task_rate:.1f} tasks/s ({task_rate / bare:.2f} of bare's {bare:.1f}/s in "
        f"wall time); per CPU-second of the stream {stream_per_cpu:.1f} tasks against "
        f"{bare_per_cpu:.1f} bare = {stream_per_cpu / bare_per_cpu:.2f} per head core "
        f"(target >= 0.8); episode mode {episode_rate:.2f} scored episodes/s with the "
        "replayed reference policy"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
