"""A real Ray cluster on this machine: a head that advertises the head resource and
worker nodes that join it without. Each node is a `ray start --block` process in its
own session; stopping them kills their process groups by pid. A worker node can be
lost (SIGKILL of its raylet) or paused (SIGSTOP of its raylet, then SIGCONT), the
faults of a preempted or unresponsive machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.local_model import free_port
from orchestrator.run.cluster import ensure_auth_token

RAY = str(Path(sys.executable).with_name("ray"))
HEAD_RESOURCE = "causal_gym_head"


@dataclass
class RayCluster:
    port: int
    env: dict[str, str]
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start_node(self, *args: str) -> None:
        proc = subprocess.Popen(
            [RAY, "start", "--block", "--disable-usage-stats", *args],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.procs.append(proc)

    def nodes(self) -> list[dict[str, object]]:
        code = (
            f"import json, ray; ray.init(address={self.address!r}, log_to_driver=False); "
            "print(json.dumps([{'id': n['NodeID'], 'alive': n['Alive'], "
            "'resources': n['Resources']} for n in ray.nodes()]))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], env=self.env, capture_output=True, text=True, timeout=120
        )
        nodes: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
        return [n for n in nodes if n["alive"]]

    def wait_for(self, count: int, timeout: float = 120) -> list[dict[str, object]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                nodes = self.nodes()
                if len(nodes) >= count:
                    return nodes
            except (ValueError, IndexError, subprocess.TimeoutExpired):
                pass
            time.sleep(2)
        raise TimeoutError(f"the Ray cluster did not reach {count} nodes")

    def raylet(self, node_id: str) -> int:
        """The pid of the node's raylet (its command line names the node id)."""
        needle = f"--node_id={node_id}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"/raylet") and needle in argv:
                return int(entry)
        raise LookupError(f"no raylet of node {node_id} is running")

    def node_processes(self, node_id: str) -> list[int]:
        """Every live process of the node's `ray start` session."""
        raylet = self.raylet(node_id)
        session = session_of(raylet)
        return [p for p in process_environments() if session_of(p) == session]

    def kill_node(self, node_id: str) -> int:
        """The node lost: SIGKILL of its raylet (its workers see it go and exit).
        Returns the session id, so a test can check that nothing of it is left."""
        raylet = self.raylet(node_id)
        session = session_of(raylet)
        os.kill(raylet, signal.SIGKILL)
        assert session is not None
        return session

    def workers(self) -> list[str]:
        """The live worker nodes' ids (no head resource)."""
        return [str(n["id"]) for n in self.nodes() if not n["resources"].get(HEAD_RESOURCE)]

    def stop(self) -> None:
        """SIGTERM each node's session, then SIGKILL whatever of it is left (Ray drains
        for up to 30 s on SIGTERM; tests need not wait for that)."""
        sessions = {proc.pid for proc in self.procs}
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(p.poll() is None for p in self.procs):
            time.sleep(0.2)
        for pid in [p for p in process_environments() if session_of(p) in sessions]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        for proc in self.procs:
            proc.wait(timeout=30)


#: Ray's GCS declares a silent node dead after about five failed health checks of up to
#: ten seconds each; the fault tests make that about five seconds (the product keeps
#: Ray's defaults: docs/pages/runs.md says what they mean for a run).
QUICK_HEALTH_CHECKS = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
}


def start_cluster(
    head_resource: bool = True,
    head_cpus: int = 0,
    worker_cpus: int = 2,
    workers: int = 1,
    quick_health_checks: bool = False,
) -> RayCluster:
    """A head (with `head_cpus`: 0 keeps sandbox actors off it) and, unless
    `worker_cpus` is 0, `workers` nodes that join it without the head resource."""
    ensure_auth_token()  # parallel tests on a fresh machine must not race to write it
    env = {k: v for k, v in os.environ.items() if k not in ("CAUSAL_GYM_KEY", "RAY_ADDRESS")}
    env["RAY_AUTH_MODE"] = "token"  # as the README's cluster section does
    if quick_health_checks:
        env.update(QUICK_HEALTH_CHECKS)
    cluster = RayCluster(free_port(), env)
    head = [
        "--head",
        f"--port={cluster.port}",
        f"--num-cpus={head_cpus}",
        "--include-dashboard=false",
    ]
    if head_resource:
        head.append(f"--resources={json.dumps({HEAD_RESOURCE: 1})}")
    try:
        cluster.start_node(*head)
        cluster.wait_for(1)
        if worker_cpus:
            for count in range(2, workers + 2):
                cluster.start_node(f"--address={cluster.address}", f"--num-cpus={worker_cpus}")
                cluster.wait_for(count)
    except BaseException:
        cluster.stop()  # nothing this helper starts may outlive a failed start
        raise
    return cluster


def stat_field(pid: int, index: int) -> int | None:
    """A numeric field of /proc/PID/stat counted after the command name (1 is the
    parent, 3 the session), or None once the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[index])


def session_of(pid: int) -> int | None:
    return stat_field(pid, 3)


def parent_of(pid: int) -> int | None:
    return stat_field(pid, 1)


def descends_from(pid: int, ancestor: int) -> bool:
    """True when `ancestor` is on pid's parent chain; tests running side by side
    each start their own Ray, so a process is only "ours" if our driver made it."""
    current: int | None = pid
    while current is not None and current > 1:
        if current == ancestor:
            return True
        current = parent_of(current)
    return False


def process_environments() -> dict[int, bytes]:
    """Every process's environment and command line (what /proc shows of it)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            found[int(entry)] = environ + b"\0" + cmdline
    return found
