"""docs/pages/extending.md's recipe for a new family, followed to the letter: its code
blocks become a package in a temporary folder, the family registers by one call and
passes the conformance check in a fresh interpreter (so the registry of this test
process is untouched), and a reference episode answers one of its tasks in a real
sandbox and scores it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "docs" / "pages" / "extending.md"
BLOCK = re.compile(r'```python title="([^"]+)"\n(.*?)```', re.DOTALL)


def write_recipe(folder: Path) -> dict[str, str]:
    blocks = dict(BLOCK.findall(RECIPE.read_text("utf-8")))
    assert set(blocks) == {
        "toyfam/__init__.py", "toyfam/hooks.py", "check_toyfam.py", "smallbox.py", "toyagent.py"
    }  # fmt: skip
    for name, code in blocks.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code, "utf-8")
    return blocks


def run_in(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def test_the_recipe_family_conforms(tmp_path: Path) -> None:
    write_recipe(tmp_path)
    proc = run_in(tmp_path, (tmp_path / "check_toyfam.py").read_text())
    assert proc.returncode == 0 and "toy_ate conforms" in proc.stdout, proc.stderr[-3000:]


def test_a_broken_family_is_refused_by_name(tmp_path: Path) -> None:
    """The check can fail: the same family claiming a component it never scores."""
    write_recipe(tmp_path)
    contract = tmp_path / "toyfam" / "__init__.py"
    claim = '    label = "Toy ATE"\n    components = ("validity",)\n'
    text = contract.read_text().replace('    label = "Toy ATE"\n', claim)
    contract.write_text(text)
    proc = run_in(tmp_path, (tmp_path / "check_toyfam.py").read_text())
    assert proc.returncode != 0
    assert "toy_ate: components need score_components()" in proc.stderr


@pytest.mark.sandbox
def test_a_reference_episode_answers_the_recipe_family(tmp_path: Path) -> None:
    """Task ids, generation, the sandbox kit, the episode loop and the scorer take
    the new family with no other change."""
    write_recipe(tmp_path)
    code = """
from causal_gym.contracts.families import register
register("toyfam:CONTRACT")
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
    proc = run_in(tmp_path, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, reward, family = proc.stdout.split()[-3:]
    assert status == "submitted" and family == "toy_ate" and 0.0 < float(reward) <= 1.0


@pytest.mark.sandbox
def test_the_recipe_backend_keeps_every_promise(tmp_path: Path) -> None:
    write_recipe(tmp_path)
    code = """
import smallbox
from causal_gym import generate_task, resolve_key
from orchestrator.sandbox.conformance import check_backend
from orchestrator.sandbox.registry import backend_names
from orchestrator.run.config import RunConfig

files = dict(generate_task("train:ate:4", resolve_key(environ={})).public.files)
check_backend("small_local", files)
RunConfig(sandbox="small_local", n=1)  # a run config takes it
print("small_local conforms", backend_names())
"""
    proc = run_in(tmp_path, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "small_local conforms" in proc.stdout


@pytest.mark.sandbox
def test_the_recipe_agent_answers_an_episode(tmp_path: Path) -> None:
    write_recipe(tmp_path)
    code = """
import toyagent
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
    proc = run_in(tmp_path, code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-2:] == ["submitted", "1"]
