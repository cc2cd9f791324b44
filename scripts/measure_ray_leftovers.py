"""What Ray itself leaves when a runner is killed with SIGKILL, and for how long.

    .venv/bin/python scripts/measure_ray_leftovers.py [--wait 300]

Two cases, each a real `causal-gym-run` on an embedded Ray (simulated agent):
  1. SIGKILL of the driver alone;
  2. SIGKILL of the driver, its gcs_server and its raylet together.
For each, the processes the run had started (the driver's descendants) are watched
until none is alive or `--wait` seconds pass, without reaping; then
`causal-gym-run sandbox reap` runs and the script checks that nothing is left. It
prints one line per surviving process kind: how long it outlived the kill.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = str(Path(sys.executable).with_name("causal-gym-run"))


def parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def name(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except OSError:
        return "?"
    return Path(cmd.split()[0]).name if cmd.startswith("/") else cmd.split()[0]


def descendants(root: int) -> dict[int, str]:
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = current = int(entry.name)
        while current and current > 1:
            if current == root:
                found[pid] = name(pid)
                break
            current = parent(current) or 0
    found.pop(root, None)
    return found


def case(label: str, also: tuple[str, ...], wait_s: float) -> None:
    out = Path(tempfile.mkdtemp(prefix="leftovers-"))
    args = ["--split", "eval-v1", "-n", "20", "--agent", "simulated:1:3", "--out", str(out / "r")]
    driver = subprocess.Popen(
        [RUN, *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (out / "r" / "results.jsonl").exists():
        time.sleep(0.5)
    time.sleep(2)
    started = descendants(driver.pid)
    victims = [driver.pid] + [p for p, n in started.items() if n in also]
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    driver.wait()
    left = {p: n for p, n in started.items() if p not in victims}
    lifetime: dict[int, float] = {}
    while time.monotonic() - killed < wait_s and any(alive(p) for p in left):
        for pid in left:
            if pid not in lifetime and not alive(pid):
                lifetime[pid] = time.monotonic() - killed
        time.sleep(0.5)
    print(f"{label}: {len(started)} processes started, {len(victims)} killed")
    kinds: dict[str, list[float | None]] = {}
    for pid, kind in sorted(left.items(), key=lambda item: item[1]):
        kinds.setdefault(kind, []).append(lifetime.get(pid) if not alive(pid) else None)
    for kind, times in kinds.items():
        shown = ", ".join(f"{t:.1f} s" if t is not None else f"still alive at {wait_s:g} s"
                          for t in times)  # fmt: skip
        print(f"  {kind} x{len(times)}: {shown}")
    reap = subprocess.run([RUN, "sandbox", "reap"], capture_output=True, text=True, cwd=ROOT)
    remaining = [p for p in left if alive(p)]
    print(f"  after `sandbox reap` (exit {reap.returncode}): {len(remaining)} left")
    shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=300.0)
    args = parser.parse_args()
    case("1. SIGKILL of the driver", (), args.wait)
    case("2. SIGKILL of the driver, gcs_server and raylet", ("gcs_server", "raylet"), args.wait)


if __name__ == "__main__":
    main()
