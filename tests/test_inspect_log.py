"""inspect_ai logs of runs (issue 25): real runs on Ray write them, inspect_ai's own
reader reads them back equal to the run's records, a secret-key run's log holds no
task id, truth or key, and `inspect view` shows them in a real browser."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.rng_keys.keys import parse_key_hex
from orchestrator.records.read_back import read_records
from tests.support.cli import orchestrator_cli

pytestmark = [pytest.mark.ray, pytest.mark.sandbox, pytest.mark.xdist_group("ray")]
BIN = Path(sys.executable).parent
SECRET = "c3" * 32


def run(out: Path, agent: str, *extra: str, key: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    if key is not None:
        env["CAUSAL_GYM_KEY"] = key
    args = ["--split", "eval-v1", "--per-family", "2", "--agent", agent, "--out", str(out)]
    return subprocess.run(
        [str(BIN / "causal-gym-run"), *args, "--inspect-log", *extra],
        env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two real 6-task runs with --inspect-log: the reference under the public key,
    and a probe that answers no eval-v1 family (every episode fails) under a secret key."""
    base = tmp_path_factory.mktemp("inspect")
    folders = {"reference": base / "reference", "failing": base / "failing"}
    ref = run(folders["reference"], "reference")
    assert ref.returncode == 0, ref.stderr
    bad = run(folders["failing"], "trial-only", key=SECRET)
    assert bad.returncode == 0, bad.stderr
    for proc, folder in ((ref, folders["reference"]), (bad, folders["failing"])):
        # stderr is not a terminal here: every path is a whole line of its own, and the
        # viewer's command is one that runs from here (inspect is in .venv/bin, not on PATH)
        lines = proc.stderr.splitlines()
        at = lines.index("wrote the inspect log:")
        log, hint, command = lines[at + 1 : at + 4]
        assert log == str(the_log(folder)) and hint == "view it with:", lines[at:]
        program, *args = shlex.split(command)
        assert Path(program).resolve() == (BIN / "inspect").resolve(), command
        assert args == ["view", "start", "--log-dir", str(folder)], command
        assert lines[lines.index("wrote summary.json, report.md and plots in:") + 1] == str(folder)
        start = next(i for i, line in enumerate(lines) if line.endswith("output in:"))
        assert lines[start + 1] == str(folder), lines[start : start + 2]
    # a run without failures says so instead of an empty table; one with failures has it
    assert (
        "No failures: every attempt brought back an episode."
        in (folders["reference"] / "report.md").read_text()
    )
    assert "| failure class | attempts |" in (folders["failing"] / "report.md").read_text()
    return folders


def the_log(folder: Path) -> Path:
    (log,) = folder.glob("*.eval")
    return log


def read(folder: Path) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(the_log(folder)))


def test_a_reference_run_reads_back_equal_to_its_records(runs: dict[str, Path]) -> None:
    log = read(runs["reference"])
    finals = {r.task_id: r for r in read_records(runs["reference"]) if r.final}
    assert log.status == "success" and len(log.samples) == 6 == len(finals)
    assert log.eval.model == "scripted/reference" and log.eval.dataset.samples == 6
    assert log.eval.metadata["causal_gym"]["config"]["agent"] == "reference"
    transcripts = {
        json.loads(line)["task_id"]: json.loads(line)["messages"]
        for line in (runs["reference"] / "transcripts.jsonl").read_text().splitlines()
    }
    for sample in log.samples:
        record = finals[sample.id]  # a public-key run keeps its task ids
        score = sample.scores["causal_gym"]
        assert score.value == record.reward  # to the last digit
        for name in ("clipped_reward", "estimand_reward", "width_ratio", "abs_error", "loss"):
            assert score.metadata[name] == getattr(record, name), name
        assert score.metadata["reward_version"] == record.reward_version
        assert sample.metadata["family"] == record.family and sample.metadata["attempts"]
        raw = transcripts[sample.id]
        assert [m.role for m in sample.messages] == [m["role"] for m in raw]
        submit = [c for m in sample.messages if m.role == "assistant" for c in m.tool_calls or []]
        assert submit[-1].function == "submit_answer"
        assert json.loads(score.answer) == submit[-1].arguments
        assert sample.files == ["data.csv", "README.md"]
        assert sample.input.startswith("You are") and sample.total_time == record.wall_s
    mean = log.results.scores[0].metrics["mean"].value
    assert mean == pytest.approx(sum(r.reward for r in finals.values()) / 6, rel=1e-12)


def test_a_failing_probe_run_carries_each_samples_failure_class(runs: dict[str, Path]) -> None:
    log = read(runs["failing"])
    finals = [r for r in read_records(runs["failing"]) if r.final]
    assert len(log.samples) == 6 == len(finals)
    assert {r.failure_class.value for r in finals if r.failure_class} == {"no_submission"}
    for sample in log.samples:
        assert sample.metadata["failure_class"] == "no_submission"
        assert sample.scores["causal_gym"].value == -1.0
        assert "no valid submission (no_submission)" in sample.scores["causal_gym"].explanation
        assert sample.id.startswith("s-") and "task_id" not in sample.metadata
    assert log.results.scores[0].metrics["submitted"].value == 0.0


def test_a_secret_key_runs_log_holds_no_task_id_truth_or_key(runs: dict[str, Path]) -> None:
    """Every entry of the .eval archive, names included, decompressed and scanned for
    the key, each task id and each hidden truth; and the loss parts are left out."""
    import zipfile_zstd  # noqa: F401  (teaches zipfile inspect_ai's zstd entries)

    folder = runs["failing"]
    key = parse_key_hex(SECRET, "test")
    task_ids = json.loads((folder / "run.json").read_text())["task_ids"]
    forbidden = [SECRET, key.raw.hex(), *task_ids]
    for task_id in task_ids:
        hidden = generate_task(task_id, key).hidden
        for estimand in hidden.estimands.values():
            forbidden += [repr(estimand.value), repr(estimand.reference_width)]
    with zipfile.ZipFile(the_log(folder)) as archive:
        blobs = [(info.filename, archive.read(info)) for info in archive.infolist()]
    assert len(blobs) > 6
    for name, data in blobs:
        for text in forbidden:
            assert text not in name and text.encode() not in data, (name, text)
    for sample in read(folder).samples:
        assert not {"abs_error", "interval_loss", "loss"} & set(
            sample.scores["causal_gym"].metadata
        )


def test_export_writes_the_same_log_again_and_refuses_bad_input(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "again.eval"
    proc = orchestrator_cli(
        "export", "--format", "inspect", str(runs["reference"]), "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    from inspect_ai.log import read_eval_log

    again, first = read(runs["reference"]), read_eval_log(str(out))
    assert [s.id for s in first.samples] == [s.id for s in again.samples]
    assert [s.scores["causal_gym"].value for s in first.samples] == [
        s.scores["causal_gym"].value for s in again.samples
    ]
    for args, words in (
        (["--format", "json", str(runs["reference"])], "accepted: inspect"),
        (["--format", "inspect", str(tmp_path / "none")], "is not a run folder"),
        (
            ["--format", "inspect", str(runs["reference"]), "--out", str(tmp_path / "x.txt")],
            ".eval",
        ),
    ):
        bad = orchestrator_cli("export", *args)
        assert bad.returncode == 2 and words in bad.stderr and bad.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.eval"]


@pytest.mark.browser
def test_inspect_view_shows_the_samples_and_a_score_in_chromium(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    """`inspect view` on the run folder, opened in headless Chromium (Debian's): the
    log's samples are listed with their scores, and a sample shows its conversation."""
    from scripts.inspect_view import chromium_page, inspect_view

    log = read(runs["reference"])
    first = log.samples[0]
    with inspect_view(runs["reference"]) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text(first.id, exact=True).first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert all(s.id in body for s in log.samples), body[:2000]
        assert str(first.scores["causal_gym"].value)[:6] in body  # its score
        page.get_by_text(first.id, exact=True).first.click()
        page.get_by_text("Messages", exact=True).first.click()
        page.get_by_text(first.messages[0].text[:60]).first.wait_for(timeout=60_000)
        page.get_by_text("submit_answer").first.wait_for(timeout=60_000)
