"""docs/pages/extending.md's package, followed to the letter: its code blocks become a
package in a temporary folder, pip installs it (its entry points are what registers
the family, the sandbox backend and the agent: nothing calls register), and each part
is checked in fresh interpreters, so this test process's registries are untouched:
the family passes the conformance check and runs through `causal-gym materialize`,
`reference` and `score`, a reference episode answers one of its tasks in a real
sandbox, the backend keeps every promise and the agent answers an episode."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "docs" / "pages" / "extending.md"
BLOCK = re.compile(r'```(?:python|toml) title="([^"]+)"\n(.*?)```', re.DOTALL)
CAUSAL_GYM = str(Path(sys.executable).with_name("causal-gym"))


def write_recipe(folder: Path) -> dict[str, str]:
    blocks = dict(BLOCK.findall(RECIPE.read_text("utf-8")))
    assert set(blocks) == {
        "toyfam/pyproject.toml", "toyfam/toyfam/__init__.py", "toyfam/toyfam/contract.py",
        "toyfam/toyfam/hooks.py", "toyfam/toyfam/smallbox.py", "toyfam/toyfam/agent.py",
    }  # fmt: skip
    for name, code in blocks.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code, "utf-8")
    return blocks


def install(folder: Path) -> Path:
    """pip's own install of the package (its build writes the entry points) into a
    folder of its own, which the checks below put on the path."""
    site = folder / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(site), str(folder / "toyfam")],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert (site / "toyfam" / "contract.py").is_file()
    return site


def env_with(site: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def run_in(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=site.parent, env=env_with(site),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("recipe")
    write_recipe(folder)
    return install(folder)


CHECK = """
from causal_gym.contracts.families import family_names
from causal_gym.families.conformance import check_family
check_family("toy_ate")
print("toy_ate conforms", family_names()[-1])
"""


def test_the_installed_family_conforms_and_runs_through_the_command_line(
    site: Path, tmp_path: Path
) -> None:
    proc = run_in(site, CHECK)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["toy_ate", "conforms", "toy_ate"]  # after the built-ins

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CAUSAL_GYM, *args], env=env_with(site), capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip

    staged = tmp_path / "toy"
    made = cli("materialize", "train:toy_ate:3", "--out", str(staged))
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in staged.iterdir()) == ["README.md", "data.csv"]
    assert "at least three confounders" in (staged / "README.md").read_text()
    reference = cli("reference", str(staged))
    assert reference.returncode == 0, reference.stderr
    answer = tmp_path / "answer.json"
    answer.write_text(reference.stdout)
    scored = cli("score", "train:toy_ate:3", str(answer))
    assert scored.returncode == 0, scored.stderr
    assert 0.0 < json.loads(scored.stdout)["reward"] <= 1.0
    unknown = cli("materialize", "train:toy_atx:3", "--out", str(tmp_path / "x"))
    assert unknown.returncode == 2 and "accepted families are" in unknown.stderr
    assert "toy_ate" in unknown.stderr


def test_a_broken_family_is_refused_by_name(tmp_path: Path) -> None:
    """The check can fail: the same family claiming a component it never scores."""
    write_recipe(tmp_path)
    contract = tmp_path / "toyfam" / "toyfam" / "contract.py"
    claim = '    label = "Toy ATE"\n    components = ("validity",)\n'
    contract.write_text(contract.read_text().replace('    label = "Toy ATE"\n', claim))
    proc = run_in(install(tmp_path), CHECK)
    assert proc.returncode != 0
    assert "toy_ate: components need score_components()" in proc.stderr


@pytest.mark.sandbox
def test_a_reference_episode_answers_the_recipe_family(site: Path) -> None:
    """Task ids, generation, the sandbox kit, the episode loop and the scorer take
    the new family with no other change."""
    code = """
from causal_gym import generate_task, resolve_key
from causal_gym.scoring.answer import episode_score
from causal_gym.task_id import TaskId
from orchestrator.agents import EpisodeConfig, run_episode
from orchestrator.agents.loader import load_policy
from orchestrator.sandbox import make_sandbox

task = generate_task(TaskId.parse("train:toy_ate:4"), resolve_key(environ={}))
with make_sandbox("local") as box, load_policy("reference") as policy:
    box.open(dict(task.public.files))
    result = run_episode(task.public.to_wire("handle-toy"), box, policy,
                         EpisodeConfig(max_turns=10))
score = episode_score(task, result.submission)
print(result.status.value, round(score.reward, 6), task.public.family)
"""
    proc = run_in(site, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, reward, family = proc.stdout.split()[-3:]
    assert status == "submitted" and family == "toy_ate" and 0.0 < float(reward) <= 1.0


@pytest.mark.sandbox
def test_the_recipe_backend_keeps_every_promise(site: Path) -> None:
    code = """
from causal_gym import generate_task, resolve_key
from orchestrator.sandbox.conformance import check_backend
from orchestrator.sandbox.registry import backend_names
from orchestrator.run.config import RunConfig

files = dict(generate_task("train:ate:4", resolve_key(environ={})).public.files)
check_backend("small_local", files)
RunConfig(sandbox="small_local", n=1)  # a run config takes it
print("small_local conforms", backend_names())
"""
    proc = run_in(site, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "small_local conforms" in proc.stdout


@pytest.mark.sandbox
def test_the_recipe_agent_answers_an_episode(site: Path) -> None:
    code = """
from causal_gym import generate_task, resolve_key
from orchestrator.agents import EpisodeConfig, run_episode
from orchestrator.agents.loader import check_agent_spec, load_policy
from orchestrator.sandbox import make_sandbox

check_agent_spec("placeholder")
task = generate_task("train:mediation:2", resolve_key(environ={}))
with make_sandbox("local") as box, load_policy("placeholder") as policy:
    box.open(dict(task.public.files))
    result = run_episode(task.public.to_wire("handle-agent"), box, policy, EpisodeConfig())
print(result.status.value, result.turns)
"""
    proc = run_in(site, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-2:] == ["submitted", "1"]
