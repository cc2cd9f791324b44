"""A head other people log in to, attacked the way issue 34's attacker worked: another
user (`nobody`, through setpriv) plants Ray markers and pre-makes the sandbox root in
the temporary directory, races symlinks into it, and someone with the run folder but
not the head's state folder re-MACs or deletes records. Root's runner must kill,
mount and accept nothing because of it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.errors import StateFolderError
from orchestrator.host.private_state import STATE_ENV_VAR, state_folder, state_root
from orchestrator.sandbox.mounts import leftover_mounts
from tests.support.cli import orchestrator_cli

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="another user's attack needs root")


def as_nobody(*argv: str, **options: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*AS_NOBODY, *argv], start_new_session=True, **options)  # type: ignore[call-overload]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def decoys() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_state_folder_is_named_once_and_persistent_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.host.private_state import configured_root

    monkeypatch.delenv(STATE_ENV_VAR, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert configured_root() == tmp_path / "home" / ".local" / "state" / "causal-gym"
    made = state_root()
    assert made == configured_root() and made.stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert configured_root() == tmp_path / "xdg" / "causal-gym"
    monkeypatch.setenv(STATE_ENV_VAR, str(tmp_path / "named"))
    assert configured_root() == tmp_path / "named"


@root_only
def test_the_state_folder_refuses_what_someone_else_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_dir = tmp_path / "open"  # world-writable, not sticky: anyone could swap things in it
    open_dir.mkdir(mode=0o777)
    os.chmod(open_dir, 0o777)
    planted = tmp_path / "planted"  # made first by another user
    planted.mkdir()
    os.chown(planted, NOBODY, NOBODY)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    for where, refusal in (
        (planted, "belongs to uid 65534"),
        (tmp_path / "link", "a symlink"),
        (open_dir / "state", "is writable by others"),
    ):
        monkeypatch.setenv(STATE_ENV_VAR, str(where))
        with pytest.raises(StateFolderError, match=refusal):
            state_root()
    monkeypatch.setenv(STATE_ENV_VAR, str(tmp_path / "mine"))
    root = state_root()
    assert root.stat().st_mode & 0o777 == 0o700 and root.stat().st_uid == 0
    (root / "sandboxes").symlink_to(tmp_path / "elsewhere")  # a link inside it is refused too
    with pytest.raises(StateFolderError, match="a symlink"):
        state_folder("sandboxes")
    (root / "sandboxes").unlink()
    assert state_folder("sandboxes").is_dir()
    planted_inside = root / "ray"
    planted_inside.mkdir()
    os.chown(planted_inside, NOBODY, NOBODY)
    with pytest.raises(StateFolderError, match="belongs to uid 65534"):
        state_folder("ray")


def _marker(session_dir: str) -> str:
    return json.dumps({"session_dir": session_dir, "node_id": "x"})


@root_only
def test_markers_planted_by_another_user_make_the_reaper_kill_nothing(
    private_tmp: Path, decoys: list[subprocess.Popen[bytes]]
) -> None:
    tmp_path = private_tmp
    os.chmod(tmp_path, 0o755)  # other users may enter
    temp = tmp_path / "tmp"  # the runner's temporary directory, writable by everyone
    temp.mkdir()
    os.chmod(temp, 0o1777)
    bait = tmp_path / "session"  # a folder a root decoy holds a log open in
    (bait / "logs").mkdir(parents=True)
    (bait / "logs" / "x.log").write_text("")
    decoys.append(as_nobody("sleep", "600"))
    decoys.append(as_nobody("bash", "-c", "exec -a ray::innocent sleep 600"))
    decoys.append(subprocess.Popen(["sleep", "600"], start_new_session=True))
    decoys.append(
        subprocess.Popen(
            ["bash", "-c", f"exec 3<{bait}/logs/x.log; exec -a ray::decoy sleep 600"],
            start_new_session=True,
        )
    )
    time.sleep(0.5)
    env = {"TMPDIR": str(temp), STATE_ENV_VAR: str(tmp_path / "state")}
    # The old attack: a marker in the temporary directory naming "/" (17 of 78
    # processes, pid 1 among them, matched the old rule).
    planter = as_nobody(
        sys.executable, "-c",
        f"open({str(temp / 'causal-gym-ray-1.1.json')!r}, 'w').write({_marker('/')!r})",
    )  # fmt: skip
    assert planter.wait(timeout=30) == 0
    # Root's own state folder is out of another user's reach.
    ray_markers = orchestrator_cli("sandbox", "reap", **env)
    assert ray_markers.returncode == 0, ray_markers.stderr
    intruder = as_nobody(
        sys.executable, "-c",
        f"open({str(tmp_path / 'state' / 'ray' / '9.9.json')!r}, 'w').write('{{}}')",
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert intruder.wait(timeout=30) != 0
    assert b"Permission denied" in intruder.communicate()[1]
    # A dead runner's marker in root's own folder that names a session some root
    # process holds a log of, but which started after every decoy: the rules need
    # the caller's uid, a start no earlier than the instance, and the exact session.
    from orchestrator.run.leftovers import RayMarker, boot_ticks

    ray_folder = tmp_path / "state" / "ray"
    gone = "999999999"  # no such pid: their runners are dead
    for name, session in ((f"{gone}.1", bait), (f"{gone}.2", Path("/tmp"))):
        marker = RayMarker(session_dir=str(session), node_id="x", uid=0, since=boot_ticks() + 1)
        (ray_folder / f"{name}.json").write_text(marker.model_dump_json())
    reap = orchestrator_cli("sandbox", "reap", **env)
    assert reap.returncode == 0, reap.stderr
    assert json.loads(reap.stdout)["ray_processes"] == []
    assert all(alive(proc.pid) for proc in decoys)
    assert not list(ray_folder.iterdir())  # the dead owners' markers are gone
    # and when the marker's clock is before the decoy started, the decoy holding a log
    # of the noted session is the one (only that one) the reaper takes
    old = RayMarker(session_dir=str(bait), node_id="x", uid=0, since=0)
    (ray_folder / f"{gone}.3.json").write_text(old.model_dump_json())
    reap = orchestrator_cli("sandbox", "reap", **env)
    assert json.loads(reap.stdout)["ray_processes"] == [decoys[3].pid]
    assert [alive(proc.pid) for proc in decoys] == [True, True, True, False]


RACER = """
import os, sys, time
base, decoy, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
os.makedirs(base, exist_ok=True)
os.chmod(base, 0o777)
swapped = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    for name in os.listdir(base):
        path = os.path.join(base, name)
        if not os.path.islink(path):
            try:
                os.rename(path, path + ".moved")
                os.symlink(decoy, path)
                swapped += 1
            except OSError:
                pass
    for name in ("0.0.x", "1.1.y"):
        try:
            os.symlink(decoy, os.path.join(base, name))
        except OSError:
            pass
    time.sleep(0.001)
print(swapped, flush=True)
"""


@root_only
@pytest.mark.sandbox
def test_no_scratch_mount_lands_outside_the_state_folder(
    private_tmp: Path, monkeypatch: pytest.MonkeyPatch, decoys: list[subprocess.Popen[bytes]]
) -> None:
    from orchestrator.sandbox import SandboxLimits, make_sandbox

    tmp_path = private_tmp
    os.chmod(tmp_path, 0o755)  # other users may enter
    temp = tmp_path / "tmp"
    temp.mkdir()
    os.chmod(temp, 0o1777)
    decoy = tmp_path / "precious"  # root's folder the attacker wants hidden under a tmpfs
    decoy.mkdir()
    (decoy / "keep.txt").write_text("root's file\n")
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setenv(STATE_ENV_VAR, str(tmp_path / "state"))
    racer = as_nobody(
        sys.executable, "-c", RACER, str(temp / "causal-gym-sandboxes"), str(decoy), "15",
        stdout=subprocess.PIPE,
    )  # fmt: skip
    decoys.append(racer)
    home = state_folder("sandboxes")
    # (the machine's mount table holds other test processes' sandboxes too: only those
    # in this test's folders are this test's business)
    ours: set[Path] = set()
    for _ in range(3):
        box = make_sandbox("local", SandboxLimits(), None)
        with box:
            box.open({"data.csv": b"x,y\n1,2\n"})
            assert box.exec("cat data.csv", 30).stdout == "x,y\n1,2\n"
            mounts = {m.mount_point for m in leftover_mounts()}
            assert box.scratch is not None and box.scratch.root in mounts  # type: ignore[attr-defined]
            ours |= {m for m in mounts if m.is_relative_to(tmp_path)}
    assert racer.wait(timeout=60) == 0
    assert len(ours) == 3 and all(m.parent.parent == home for m in ours), ours
    assert (decoy / "keep.txt").read_text() == "root's file\n"
    assert not [m for m in leftover_mounts() if m.mount_point.is_relative_to(tmp_path)]


RUN = str(Path(sys.executable).with_name("causal-gym-run"))
ARGS = ("--split", "eval-v1", "-n", "3", "--agent", "constant")


def finished_run(out: Path) -> Path:
    done = subprocess.run([RUN, *ARGS, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


def resume(folder: Path) -> Any:
    """A refused resume ends before Ray starts: in this process."""
    return orchestrator_cli(*ARGS, "--out", str(folder), "--resume")


def _remac(lines: list[str], key: bytes) -> list[str]:
    """What someone with the folder but not the head's secret can do: pick a key, put it
    in run.secret (where version 2 kept it), raise every reward to 1 and MAC each line
    again, chained under that key."""
    from orchestrator.records.chain import GENESIS
    from orchestrator.records.mac import mac_of

    out, prev = [], GENESIS
    for line in lines:
        fields = json.loads(line)
        fields.pop("mac")
        fields.update(reward=1.0, clipped_reward=1.0, prev=prev)
        prev = mac_of(fields, key)
        out.append(json.dumps({**fields, "mac": prev}))
    return out


@pytest.mark.ray
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_re_maced_or_deleted_records_are_refused_on_resume(tmp_path: Path) -> None:
    from orchestrator.records.mac import mac_of
    from orchestrator.records.read_back import REJECTED_FILE

    honest = finished_run(tmp_path / "honest")
    genuine = (honest / "results.jsonl").read_text().splitlines()
    assert len(genuine) == 3
    key = os.urandom(32)

    def copy(name: str, lines: list[str], remac_run_json: bool = False) -> Path:
        folder = tmp_path / name
        shutil.copytree(honest, folder)
        (folder / "results.jsonl").write_text("".join(x + "\n" for x in lines))
        (folder / "run.secret").write_text(key.hex())
        if remac_run_json:
            identity = json.loads((folder / "run.json").read_text())
            identity.pop("mac")
            identity["mac"] = mac_of({"run.json": identity}, key)
            (folder / "run.json").write_text(json.dumps(identity))
        return folder

    cases = {
        "remaced": (copy("remaced", _remac(genuine, key)), "chains 0 lines, but this head"),
        "remaced-all": (
            copy("remaced-all", _remac(genuine, key), remac_run_json=True),
            "not written by a run of this user on this head",
        ),
        "middle-deleted": (
            copy("middle-deleted", [genuine[0], genuine[2]]),
            "results.jsonl line 2 does not follow the line before it",
        ),
        "last-deleted": (
            copy("last-deleted", genuine[:2]),
            "results.jsonl chains 2 lines, but this head recorded 3",
        ),
    }
    for name, (folder, refusal) in cases.items():
        before = (folder / "results.jsonl").read_bytes()
        done = resume(folder)
        assert done.returncode == 2, (name, done.stderr)
        assert refusal in done.stderr, (name, done.stderr)
        assert done.stderr.strip().splitlines()[-1].startswith("error: "), done.stderr
        assert "summary.json" not in done.stderr
        kept = folder / REJECTED_FILE
        if name in ("remaced", "middle-deleted"):  # the refused lines are kept aside
            rejected = [json.loads(x)["text"] for x in kept.read_text().splitlines()]
            assert rejected == ([*_remac(genuine, key)] if name == "remaced" else [genuine[2]])
        else:
            assert (folder / "results.jsonl").read_bytes() == before and not kept.exists()
        again = resume(folder)  # and still refused: the head remembers how many it wrote
        held = "run of this user" if name == "remaced-all" else "but this head recorded 3"
        assert again.returncode == 2 and held in again.stderr, again.stderr
    done = subprocess.run([RUN, *ARGS, "--out", str(honest), "--resume"], capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0 and "3 done, 0 to run" in done.stderr, done.stderr
