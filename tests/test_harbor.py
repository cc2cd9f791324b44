"""Harbor task folders (`causal-gym export harbor`) checked by Harbor 0.25 itself, in
its own Python 3.12 virtualenv: every folder is a valid task, lint finds nothing but
the base image's missing digest (nothing at all when one is given), two exports are
byte-identical with Harbor's own digests, no folder holds a truth; and trials through
Harbor's trial runner on the bubblewrap provider (no Docker): the oracle's reward.json
is the project's score of the reference answer, the no-op agent gets the
no-submission reward, and answers that are not answers get a finite one with a reason."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.reference.answer import directory_answer
from causal_gym.rng_keys.keys import resolve_key
from causal_gym.scoring.answer import episode_score
from causal_gym.task_id import TaskId
from orchestrator.sandbox.scratch import sandboxes_dir

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
HARBOR_VENV = REPO / ".venv-harbor"
CAUSAL_GYM = str(Path(sys.executable).with_name("causal-gym"))
PROVIDER = "orchestrator.integrations.harbor_env:BwrapEnvironment"
FAMILIES = ("ate", "null_detect")
PER_FAMILY = 5
QUIET = {**os.environ, "HARBOR_TELEMETRY": "0"}  # Harbor's CLI reports usage otherwise
PINNED = "python:3.11-slim@sha256:" + hashlib.sha256(b"a stand-in digest").hexdigest()


def _python312() -> str | None:
    """A Python 3.12 that runs (a pyenv shim for an unselected version does not)."""
    candidates = [shutil.which("python3.12")]
    pyenv = shutil.which("pyenv")
    if pyenv is not None:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += [str(p) for p in sorted(Path(root).glob("versions/3.12*/bin/python3.12"))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "import sys"], capture_output=True).returncode == 0:
            return candidate
    return None


@pytest.fixture(scope="module")
def harbor() -> Path:
    if not (HARBOR_VENV / "bin" / "harbor").exists():
        if _python312() is None:
            pytest.skip("no Python 3.12 on this machine: Harbor 0.25 needs it (CI has one)")
        pytest.fail("no .venv-harbor: run `bash scripts/setup_protocols.sh`")
    return HARBOR_VENV / "bin"


def export(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["export", "harbor", "--split", "eval-v1", "--out", str(out), "--families"]
    args += [",".join(FAMILIES), "--per-family", str(PER_FAMILY), *extra]
    env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    return subprocess.run(
        [CAUSAL_GYM, *args],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor") / "eval-v1"
    done = export(out)
    assert done.returncode == 0, done.stderr
    return out


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def harbor_python(bin_dir: Path, code: str) -> Any:
    done = subprocess.run(
        [str(bin_dir / "python"), "-c", code], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def run_trials(bin_dir: Path, tasks: Path, agent: str, jobs: Path, *only: str) -> dict[str, Any]:
    """`harbor run` on the bubblewrap provider; each trial's verifier folder by task."""
    select = [arg for name in only for arg in ("-i", name)]
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "PYTHONPATH": str(REPO)}
    env.pop("CAUSAL_GYM_KEY", None)
    done = subprocess.run(
        [str(bin_dir / "harbor"), "run", "-p", str(tasks), "-a", agent, "-e", PROVIDER,
         "-o", str(jobs), "--job-name", "job", "-y", "-q", "-n", "2", *select],
        capture_output=True, text=True, timeout=1800, env=env, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    trials = {}
    for trial in (jobs / "job").iterdir():
        if trial.is_dir():
            result = json.loads((trial / "result.json").read_text())
            assert result.get("exception_info") is None, result["exception_info"]
            trials[trial.name.rsplit("__", 1)[0]] = trial / "verifier"
    return trials


def test_folders_are_valid_identical_across_exports_and_lint_clean(
    harbor: Path, exported: Path, tmp_path: Path
) -> None:
    again = tmp_path / "again"
    assert export(again).returncode == 0
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((exported / f).read_bytes() == (again / f).read_bytes() for f in files)
    names = [p.name for p in folders(exported)]
    assert len(names) == len(FAMILIES) * PER_FAMILY
    # Harbor's own validity check and content digests, against dataset.toml's
    checked = harbor_python(
        harbor,
        "import json, sys, tomllib; from pathlib import Path\n"
        "from harbor.models.task.task import Task\n"
        "from harbor.publisher.packager import Packager\n"
        f"root = Path({str(exported)!r})\n"
        "listed = tomllib.loads((root / 'dataset.toml').read_text())['tasks']\n"
        "out = {t['name']: [t['digest'], 'sha256:' + Packager.compute_content_hash("
        "root / t['name'].split('/')[1])[0], Task.is_valid_dir(root / t['name'].split('/')[1])]"
        " for t in listed}\n"
        "print(json.dumps(out))",
    )
    assert sorted(n.split("/")[1] for n in checked) == names
    assert all(listed == computed and valid for listed, computed, valid in checked.values())

    # lint: the only finding is the base image's digest, which an exporter can give
    def lint(root: Path) -> list[dict[str, Any]]:
        done = subprocess.run(
            [str(harbor / "harbor"), "lint", "--select", "ALL", "--json", *map(str, folders(root))],
            capture_output=True, text=True, timeout=300, env=QUIET,
        )  # fmt: skip
        return _diagnostics(json.loads(done.stdout))

    found = lint(exported)
    assert found and {d["rule"] for d in found} == {"unpinned-image"}, found
    pinned = tmp_path / "pinned"
    assert export(pinned, "--base-image", PINNED).returncode == 0
    assert lint(pinned) == []
    # no truth in any folder; the agent's image never sees the verifier or the solution
    key = resolve_key(None)
    for folder in folders(exported):
        task_id = json.loads((folder / "tests" / "task.json").read_text())["task_id"]
        truth = generate_task(TaskId.parse(task_id), key).hidden.reveal()
        text = "\n".join(
            p.read_text() for p in folder.rglob("*") if p.is_file() and p.suffix != ".csv"
        )
        for value in _floats(truth):
            assert repr(value) not in text, (task_id, value)
        dockerfile = (folder / "environment" / "Dockerfile").read_text()
        assert "tests" not in dockerfile and "solution" not in dockerfile


def _diagnostics(task: Any) -> list[dict[str, Any]]:
    if isinstance(task, dict) and "rule" in task:
        return [task]
    if isinstance(task, dict):
        return [d for v in task.values() for d in _diagnostics(v)]
    if isinstance(task, list):
        return [d for v in task for d in _diagnostics(v)]
    return []


def _floats(value: Any) -> list[float]:
    if isinstance(value, float) and value not in (0.0, 1.0, -1.0):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list | tuple):
        return [f for v in value for f in _floats(v)]
    return []


def test_bad_requests_are_refused_whole(tmp_path: Path) -> None:
    secret = {**os.environ, "CAUSAL_GYM_KEY": "5a" * 32}
    for args, env, says in (
        (["--split", "eval-v1"], secret, "public"),
        (["--split", "train"], None, "accepted"),
        (["--split", "eval-v1", "--families", "nope"], None, "accepted families"),
        (["--split", "eval-v1", "--per-family", "0"], None, "at least 1"),
    ):
        out = tmp_path / "out"
        done = subprocess.run(
            [CAUSAL_GYM, "export", "harbor", *args, "--out", str(out)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not out.exists()
    assert list(tmp_path.iterdir()) == []  # no half-written staging folder either


def test_oracle_trials_score_as_the_project_does(
    harbor: Path, exported: Path, tmp_path: Path
) -> None:
    trials = run_trials(harbor, exported, "oracle", tmp_path / "jobs")
    assert sorted(trials) == [p.name for p in folders(exported)]
    key = resolve_key(None)
    for name, verifier in trials.items():
        task_id = json.loads((exported / name / "tests" / "task.json").read_text())["task_id"]
        task = generate_task(TaskId.parse(task_id), key)
        answer = directory_answer(exported / name / "environment" / "workspace")
        expected = episode_score(task, answer).fields()
        rewards = json.loads((verifier / "reward.json").read_text())
        assert rewards["submitted"] == 1.0 and rewards["reward"] > 0, (name, rewards)
        for field, value in expected.items():
            if isinstance(value, int | float):
                assert rewards[field] == pytest.approx(float(value), abs=1e-9), (name, field)
    assert not list(sandboxes_dir().iterdir())


def test_no_answer_and_broken_answers_get_a_finite_reward_and_a_reason(
    harbor: Path, exported: Path, tmp_path: Path
) -> None:
    agents = {
        "nop": "does not exist",
        "tests.support.harbor_agents:GarbageAnswer": "errors",
        "tests.support.harbor_agents:WrongShapeAnswer": "errors",
        "tests.support.harbor_agents:LinkedAnswer": "does not exist",
    }
    for number, (agent, reason) in enumerate(agents.items()):
        trials = run_trials(harbor, exported, agent, tmp_path / f"jobs{number}", "eval-v1-ate-0")
        verifier = trials["eval-v1-ate-0"]
        rewards = json.loads((verifier / "reward.json").read_text())
        assert rewards["reward"] == -1.0 and rewards["submitted"] == 0.0, (agent, rewards)
        verdict = json.loads((verifier / "verdict.json").read_text())
        said = verdict.get("errors") or verdict.get("no_submission")
        assert said and reason in json.dumps(verdict), (agent, verdict)
    assert not list(sandboxes_dir().iterdir())
