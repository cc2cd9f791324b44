"""Attacks on the sandboxes and the runner, as properties of both backends.

Each test plays a hostile agent: it prepares the workspace with a command (as the
agent would, between tool calls), then has the host do its part, and checks that the
host, the runner and the record come out unharmed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import (
    AgentTurn,
    EpisodeConfig,
    EpisodeStatus,
    Policy,
    ToolCall,
    run_episode,
)
from orchestrator.errors import SandboxPathError
from orchestrator.sandbox import Sandbox, SandboxLimits, make_sandbox
from orchestrator.sandbox.mounts import is_mounted
from tests.conftest import cached_task
from tests.support.cli import orchestrator_cli
from tests.support.docker_env import require_docker

KINDS = [
    pytest.param("local", marks=pytest.mark.sandbox),
    pytest.param("docker", marks=pytest.mark.docker),
]


def open_box(kind: str, limits: SandboxLimits | None = None) -> Sandbox:
    image = require_docker() if kind == "docker" else None
    box = make_sandbox(kind, limits or SandboxLimits(memory_mb=512, pids=128, disk_mb=256), image)
    box.open({"data.csv": b"x,y\n1,2\n"})
    return box


@pytest.fixture(params=KINDS)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sandbox = open_box(request.param)
    try:
        yield sandbox
    finally:
        sandbox.close()


# --- 1. host-side file operations follow, block on and recurse through nothing -------


def test_a_symlink_at_the_written_name_is_replaced_not_followed(
    box: Sandbox, tmp_path: Path
) -> None:
    victim = "/opt/analyst/bin/pip" if box.kind == "docker" else str(tmp_path / "victim")
    if box.kind == "local":
        Path(victim).write_text("host file\n")
    before = box.exec(f"cat {victim}", 30).stdout if box.kind == "docker" else "host file\n"
    box.exec(f"ln -s {victim} answer.json; ln -s {victim} .answer.json.staging", 30)
    box.write_file("answer.json", b'{"estimate": 1}')
    assert box.read_file("answer.json") == b'{"estimate": 1}'
    listing = box.exec("ls -l answer.json", 30).stdout
    assert not listing.startswith("l"), listing  # a regular file now, not the link
    after = (
        box.exec(f"cat {victim}", 30).stdout if box.kind == "docker" else Path(victim).read_text()
    )
    assert after == before
    if box.kind == "local":
        assert os.stat(victim).st_uid == os.geteuid()  # never handed to the sandbox uid


def test_symlinked_parents_and_directories_are_refused(box: Sandbox) -> None:
    box.exec("ln -s /etc etc; ln -s / root; mkdir out", 30)
    for path in ("etc/owned", "root/tmp/owned"):
        with pytest.raises(SandboxPathError):
            box.write_file(path, b"x")
        with pytest.raises(SandboxPathError):
            box.read_file(path.replace("owned", "passwd"))
    with pytest.raises(SandboxPathError, match="directory"):
        box.write_file("out", b"x")
    assert "owned" not in box.exec("ls /etc /tmp", 30).stdout


@pytest.mark.parametrize(
    "make", ["mkfifo pipe", "mkdir pipe", "ln -s /dev/zero pipe", "ln -s /proc/self/environ pipe"]
)
def test_reads_refuse_fifos_directories_devices_and_links_at_once(box: Sandbox, make: str) -> None:
    box.exec(make, 30)
    started = time.monotonic()
    with pytest.raises(SandboxPathError):
        box.read_file("pipe")
    assert time.monotonic() - started < 10


def test_reads_are_bounded_before_anything_is_loaded(box: Sandbox) -> None:
    box.exec("head -c 50000000 /dev/zero > big", 60)
    started = time.monotonic()
    assert box.read_file("big", max_bytes=1000) == b"\0" * 1000
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("kind", KINDS)
def test_a_1200_level_tree_is_removed_on_close(kind: str) -> None:
    box = open_box(kind)
    deep = "import os\nfor _ in range(1200):\n    os.mkdir('d')\n    os.chdir('d')\nprint('deep')"
    made = box.exec(["python", "-c", deep], 60)
    assert made.stdout == "deep\n", made
    where = getattr(box, "scratch", None)
    box.close()  # no RecursionError, nothing left
    if where is not None:
        assert not where.path.exists()


# --- 2. totals per sandbox -------------------------------------------------------------

FIVE_HOGS = (
    "import subprocess\n"
    "hog = 'x = bytearray(120 * 2**20); import time; time.sleep(4)'\n"
    "procs = [subprocess.Popen(['python', '-c', hog]) for _ in range(5)]\n"
    "print(sorted(p.wait() for p in procs))\n"
)


@pytest.mark.parametrize("kind", KINDS)
def test_five_processes_cannot_exceed_the_memory_total(kind: str) -> None:
    with open_box(kind, SandboxLimits(memory_mb=300, pids=64, disk_mb=64)) as box:
        result = box.exec(["python", "-c", FIVE_HOGS], 60)
        codes = json.loads(result.stdout)
        assert any(code in (-9, 137) for code in codes), result  # some were OOM-killed
        assert "memory" in result.limits_hit
        assert box.exec("echo alive", 30).stdout == "alive\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_2gb_file_in_dev_shm_hits_the_disk_limit(kind: str) -> None:
    with open_box(kind, SandboxLimits(disk_mb=128)) as box:
        started = time.monotonic()
        result = box.exec(
            "head -c 2000000000 /dev/zero > /dev/shm/big; echo rc=$?; du -sm /dev/shm", 60
        )
        assert "No space left on device" in result.stderr, result
        assert "rc=1" in result.stdout
        assert int(result.stdout.split()[-2]) <= 128
        assert time.monotonic() - started < 30
        # the workspace, /tmp and /dev/shm share it (local) or split it (docker)
        more = box.exec("head -c 200000000 /dev/zero > /workspace/more; echo rc=$?", 60)
        assert "rc=1" in more.stdout


LIMIT_COMMANDS = {
    "memory": ["python", "-c", FIVE_HOGS],
    "processes": "for i in $(seq 200); do sleep 3 & done; wait",
    "disk": "head -c 200000000 /dev/zero > /dev/shm/big",
}


@pytest.mark.parametrize("limit", sorted(LIMIT_COMMANDS))
@pytest.mark.parametrize("kind", KINDS)
def test_both_backends_tell_the_agent_the_same_limit(kind: str, limit: str) -> None:
    """The agent reads the same '[sandbox limit reached: ...]' note whichever backend
    runs it (Docker's from the container's own groups and tmpfs, read on the host)."""
    from orchestrator.agents.tools import LIMIT_NOTES, format_exec

    with open_box(kind, SandboxLimits(memory_mb=300, pids=64, disk_mb=64)) as box:
        result = box.exec(LIMIT_COMMANDS[limit], 60)
        note = f"[sandbox limit reached: {LIMIT_NOTES[limit]}]"
        assert note in format_exec(result, 4000).splitlines(), (result.limits_hit, result)
        calm = box.exec("echo calm", 30)
        if limit != "disk":  # a full disk stays full; the counters count each hit once
            assert limit not in calm.limits_hit


@pytest.mark.sandbox
def test_the_cpu_set_cannot_be_widened_from_inside() -> None:
    if os.geteuid() != 0 or (os.cpu_count() or 1) < 2:
        pytest.skip("needs root (cgroups) and two cores; CI has both")
    with open_box("local", SandboxLimits(cpus=1)) as box:
        result = box.exec(
            f"taskset -cp $$; taskset -cp 0-{(os.cpu_count() or 2) - 1} $$ >/dev/null 2>&1; "
            "taskset -cp $$",
            30,
        )
        before, after = result.stdout.splitlines()
        assert before.split(":")[1] == after.split(":")[1], result.stdout
        assert "," not in after and "-" not in after.split(":")[1]


@pytest.mark.docker
def test_docker_applies_a_file_size_limit() -> None:
    with open_box("docker", SandboxLimits(file_mb=8, disk_mb=256)) as box:
        result = box.exec("head -c 20000000 /dev/zero > big; echo rc=$?; wc -c < big", 30)
        rc, size = result.stdout.split()
        assert rc != "rc=0" and int(size) == 8 * 1024 * 1024


# --- 3. no process outlives its exec --------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_detached_sleeper_dies_with_its_exec(kind: str) -> None:
    tag = str(7_000_000 + uuid.uuid4().int % 1_000_000)
    with open_box(kind) as box:
        normal = box.exec(
            f"setsid sh -c 'exec sleep {tag}' & nohup sleep {tag} >/dev/null 2>&1 & echo started",
            30,
        )
        assert normal.stdout == "started\n"
        late = box.exec(f"setsid sh -c 'exec sleep {tag}' & sleep 60", 2)
        assert late.timed_out
        seen = box.exec("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '", 30).stdout
        assert f"sleep {tag}" not in seen
        host = subprocess.run(["pgrep", "-f", f"sleep {tag}"], capture_output=True, text=True)
        assert host.stdout.strip() == ""


# --- 7. no new user namespaces; the analyst's shell tools work --------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_no_user_namespaces_and_the_common_tools_work(kind: str) -> None:
    with open_box(kind) as box:
        userns = box.exec("unshare -Urm true", 30)
        assert userns.exit_code not in (0, None, 127), userns
        tools = (
            "printf 'b,2\\na,1\\nb,3\\n' > t.csv; "
            "awk -F, '{s += $2} END {print \"awk\", s}' t.csv; "
            "sed -n 2p t.csv | sed 's/^/sed /'; grep -c b t.csv | sed 's/^/grep /'; "
            "sort t.csv | head -1 | sed 's/^/sort-head /'; "
            "cut -d, -f1 t.csv | tr -d '\\n' | sed 's/^/cut /'; echo; "
            "wc -l < t.csv | sed 's/^/wc /'"
        )
        out = box.exec(tools, 30)
        assert out.stdout.split("\n")[:6] == [
            "awk 6",
            "sed a,1",
            "grep 2",
            "sort-head a,1",
            "cut bab",
            "wc 3",
        ], out


# --- 5. nothing a runner starts outlives it --------------------------------------------------

RUNNER = """
import json, sys, time
from orchestrator.sandbox import make_sandbox, SandboxLimits
kind, image = sys.argv[1], sys.argv[2] or None
box = make_sandbox(kind, SandboxLimits(), image)
box.open({"data.csv": b"secret staged data"})
box.exec("sleep 1000 >/dev/null 2>&1 &", 5)
left = str(box.scratch.path) if kind == "local" else box.container.name
print(json.dumps([left]), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("kind", KINDS)
def test_kill_9_of_a_runner_then_reap_leaves_nothing_and_spares_the_living(
    kind: str, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = require_docker() if kind == "docker" else ""
    # one state folder for this process, the runner and the reaper, and no other test's
    monkeypatch.setenv("CAUSAL_GYM_STATE_DIR", str(private_tmp / "state"))
    live = open_box(kind)  # a sandbox of this (living) process: never reaped
    temp = {**os.environ, "TMPDIR": str(private_tmp)}
    try:
        runner = subprocess.Popen(
            [sys.executable, "-c", RUNNER, kind, image], stdout=subprocess.PIPE, text=True, env=temp
        )
        [left] = json.loads(runner.stdout.readline())  # type: ignore[union-attr]
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)
        if kind == "local":
            assert Path(left).is_relative_to(private_tmp) and Path(left).exists()
            if os.geteuid() == 0:  # its scratch tmpfs outlived it
                assert is_mounted(Path(left) / "scratch")
        reap = subprocess.run(
            [str(Path(sys.executable).with_name("causal-gym-run")), "sandbox", "reap"],
            capture_output=True, text=True, timeout=120, env=temp,
        )  # fmt: skip
        assert reap.returncode == 0, reap.stderr
        report = json.loads(reap.stdout)
        if kind == "local":
            assert Path(left).name in report["local"] and not Path(left).exists()
            assert not is_mounted(Path(left) / "scratch")
            assert not set(report["local"]) & {Path(live.scratch.path).name}  # type: ignore[attr-defined]
        else:
            # containers are named host-wide: a Docker sandbox opening on the other
            # worker runs the same reaper first and may be the one that removed it
            # worker runs the same reaper first and may be the one removing it (and a
            # removal in progress still lists it for a moment)
            deadline = time.monotonic() + 30
            while (listed := _containers_named(left)) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert not listed, (report, listed)
        assert box_alive(live)
    finally:
        live.close()


def _containers_named(name: str) -> str:
    return subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"name={name}"], capture_output=True, text=True
    ).stdout.strip()


def box_alive(box: Sandbox) -> bool:
    return box.exec("cat data.csv", 30).stdout == "x,y\n1,2\n"


# --- 4. every byte an agent produces ends as a recorded tool error ----------------------


class Bytes(Policy):
    """Sends one hostile tool call per turn, then a valid submission."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step < len(self.calls):
            name, arguments = self.calls[step]
            return AgentTurn(
                text="\ud800 stray", tool_calls=(ToolCall(f"c{step}", name, arguments),)
            )
        answer = '{"estimate": 0, "ci_lower": -1, "ci_upper": 1}'
        return AgentTurn(text=None, tool_calls=(ToolCall("last", "submit_answer", answer),))


@pytest.mark.parametrize("kind", KINDS)
def test_nul_surrogate_and_huge_tool_arguments_are_tool_errors(kind: str) -> None:
    long_code = "x = 1\n" * 40_000 + "print('long code ran')"  # 240 KB: over one argv string
    calls = [
        ("bash", json.dumps({"command": "echo a\x00b"})),
        ("python", json.dumps({"code": "print('\ud800')"})),
        ("bash", json.dumps({"command": "echo " + "y" * 1_048_576})),
        ("python", json.dumps({"code": long_code})),
        ("bash", '{"command": "\\ud800"}'),
    ]
    task = cached_task("train:ate:5")
    with open_box(kind) as box:
        box_files = dict(task.public.files)
        for name, data in box_files.items():
            box.write_file(name, data)
        wire = task.public.to_wire("test-handle-0002")
        result = run_episode(wire, box, Bytes(calls), EpisodeConfig(max_turns=10))
    outputs = [m["content"] for m in result.transcript if m["role"] == "tool"]
    assert "NUL byte" in outputs[0]
    assert "lone surrogate" in outputs[1]
    assert "1048581 bytes; at most 524288" in outputs[2]
    assert "long code ran" in outputs[3] and outputs[3].startswith("exit code 0")
    assert "lone surrogate" in outputs[4]
    assert result.status is EpisodeStatus.SUBMITTED
    json.loads(result.model_dump_json())  # the whole record serializes, strays included


# --- 6. a user policy finds neither the key nor the truth -------------------------------

SNOOP = """
import gc, glob, json, os
from orchestrator.agents import AgentTurn, Policy, ToolCall

SECRET = "{secret}"


class Snoop(Policy):
    def next_turn(self, messages, deadline_s):
        found = []
        if any(SECRET in v for v in os.environ.values()):
            found.append("own environment")
        for path in glob.glob("/proc/[0-9]*/environ") + ["/proc/%d/environ" % os.getppid()]:
            try:
                if SECRET.encode() in open(path, "rb").read():
                    found.append(path)
            except OSError:
                pass
        for obj in gc.get_objects():
            if type(obj).__name__ in ("HiddenTruth", "Task", "DerivationKey"):
                found.append("object " + type(obj).__name__)
        answer = json.dumps({{"estimate": 0, "ci_lower": -1, "ci_upper": 1}})
        return AgentTurn(text="snoop: " + json.dumps(found),
                         tool_calls=(ToolCall("c0", "submit_answer", answer),))
"""


@pytest.mark.sandbox
def test_a_user_policy_finds_neither_the_key_nor_the_truth(tmp_path: Path) -> None:
    secret = "ab" * 32
    source = tmp_path / "snoop.py"
    source.write_text(SNOOP.format(secret=secret))
    env = {**os.environ, "CAUSAL_GYM_KEY": secret, "ALSO_THE_KEY": secret}
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("causal-gym-run")), "episode", "train:ate:1",
         "--agent", f"python:{source}:Snoop"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "submitted"
    assert json.loads(record["agent_notes"].removeprefix("snoop: ")) == []
    assert secret not in proc.stdout + proc.stderr


def test_timeouts_must_be_finite(tmp_path: Path) -> None:
    for value in ("inf", "nan", "-1", "1e9"):
        proc = orchestrator_cli("episode", "train:ate:1", "--timeout", value)
        assert proc.returncode == 2, (value, proc.stderr)
        assert (
            proc.stderr.count("\n") == 1 and "--timeout must be a number of seconds" in proc.stderr
        )
