"""`causal-gym-run baselines`: several agents over one sample, one table; every bad
config is one line before any work; a finished baselines folder resumes to nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import orchestrator_cli

TWO_AGENTS = """
out = "{out}"
[run]
split = "eval-v1"
per_family = 1
concurrency = 2
[[agents]]
agent = "reference"
model_label = "reference"
[[agents]]
agent = "diff-in-means"
"""


LOCAL = """
[[agents]]
agent = "openai"
local_model = true
[agents.run]
max_turns = 4
[agents.openai]
base_url = "http://127.0.0.1:8091/v1"
model = "smollm2"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "baselines.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (TWO_AGENTS.replace('agent = "diff-in-means"', 'agent = "nobody"'), "agent nobody"),
        (TWO_AGENTS.replace('agent = "diff-in-means"', 'agent = "reference"'), "distinct"),
        (TWO_AGENTS.replace("per_family = 1", "per_family = 999"), "more than eval-v1"),
        (TWO_AGENTS + "colour = 'red'\n", "colour"),
        ('out = "x"\n', "agents"),
        (TWO_AGENTS + "local_model = true\n", "local_model needs agent = 'openai'"),
        (TWO_AGENTS + LOCAL.replace("127.0.0.1:8091", "10.1.2.3:8091"), "serves on this machine"),
        (TWO_AGENTS + LOCAL.replace("127.0.0.1:8091", "127.0.0.1"), "serves on this machine"),
        (TWO_AGENTS + LOCAL.replace("max_turns = 4", "max_turns = 0"), "max_turns"),
        (TWO_AGENTS + LOCAL.replace("max_turns = 4", "turns = 4"), "turns"),
        (
            TWO_AGENTS + LOCAL.replace("local_model = true", 'local_model_file = "/nowhere.gguf"'),
            "local_model_file needs local_model = true",
        ),
        (
            TWO_AGENTS + LOCAL.replace("true", 'true\nlocal_model_file = "/nowhere.gguf"', 1),
            "/nowhere.gguf is not a file",
        ),
    ],
)
def test_bad_configs_are_one_line_errors_before_any_work(
    tmp_path: Path, text: str, says: str
) -> None:
    out = tmp_path / "out"
    done = orchestrator_cli("baselines", "--config", str(write(tmp_path, text.format(out=out))))
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.ray
@pytest.mark.xdist_group("ray")
def test_two_agents_make_one_table_and_a_finished_folder_resumes_to_nothing(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    config = write(tmp_path, TWO_AGENTS.format(out=out))
    first = orchestrator_cli("baselines", "--config", str(config))
    assert first.returncode == 0, first.stderr
    table = (out / "baselines.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows[:2]] == ["`reference`", "`diff-in-means`"]
    assert all("eval-v1, 1 per family from position 0" in r for r in rows[:2])
    agents = json.loads((out / "baselines.json").read_text())["agents"]
    assert [a["episodes"] for a in agents] == [3, 3]
    assert agents[0]["mean_reward"] > agents[1]["mean_reward"]  # honest beats the probe
    assert (out / "baselines.png").read_bytes()[:4] == b"\x89PNG"
    assert {p.name for p in out.iterdir()} >= {"reference", "diff-in-means"}
    # one inspect_ai log per agent beside the table, none inside the agents' folders
    from inspect_ai.log import read_eval_log

    logs = sorted(out.glob("*.eval"), key=lambda p: p.name.split("_")[1])
    assert [p.name.split("_")[1] for p in logs] == [
        "causal-gym-eval-v1-diff-in-means",
        "causal-gym-eval-v1-reference",
    ] and not list(out.glob("*/*.eval"))
    for log, agent in zip(logs, reversed(agents), strict=True):
        samples = read_eval_log(str(log)).samples
        assert len(samples) == 3
        mean = sum(s.scores["causal_gym"].value for s in samples) / 3
        assert mean == pytest.approx(agent["mean_reward"], rel=1e-12)
    again = orchestrator_cli("baselines", "--config", str(config))
    assert again.returncode == 2 and "--resume" in again.stderr  # never over a finished one
    resumed = orchestrator_cli("baselines", "--config", str(config), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "baselines.md").read_text() == table
