"""The benchmarks' result files (scripts/bench_results.py): what a bench script writes
reads back unchanged, and a file of the wrong shape is refused at the boundary, naming
the file and what is wrong, before a docs table is drawn from it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scripts.bench_results import ResultFileError, append_run, read_result, write_result

COMMITTED = sorted((Path(__file__).resolve().parents[1] / "docs" / "benchmarks").glob("*.json"))


def _written(tmp_path: Path) -> Path:
    return write_result(
        tmp_path / "out" / "cli.json",
        "cli",
        {"runs": 3, "image": None},
        {"commands": {"python -c pass": {"median_s": 0.0203, "p90_s": 0.0218}}, "ok": True},
    )


def test_a_result_reads_back_as_written(tmp_path: Path) -> None:
    path = _written(tmp_path)
    assert [p.name for p in path.parent.iterdir()] == ["cli.json"]  # no temp file left
    result = read_result(path, "cli")
    assert result.parameters == {"runs": 3, "image": None}
    assert result.results["commands"]["python -c pass"]["median_s"] == 0.0203
    assert result.machine.cpus >= 1 and result.machine.python.startswith("3.")
    raw = json.loads(path.read_text())
    assert list(raw) == ["benchmark", "parameters", "machine", "date", "results"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("machine"), "machine\n  Field required"),
        (lambda d: d["machine"].pop("cpus"), "machine.cpus\n  Field required"),
        (lambda d: d.update(notes="fast machine"), "notes\n  Extra inputs are not permitted"),
        (lambda d: d["machine"].update(gpu=0), "machine.gpu\n  Extra inputs are not permitted"),
        (lambda d: d.update(date="yesterday"), "date\n  Input should be a valid date"),
        (
            lambda d: d["results"]["commands"]["python -c pass"].update(median_s="20.3 ms"),
            "results.commands.python -c pass.median_s is '20.3 ms': results hold raw numbers",
        ),
    ],
    ids=["missing-key", "missing-nested-key", "extra-key", "extra-nested-key", "bad-date", "text"],
)
def test_a_malformed_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], message: str
) -> None:
    path = _written(tmp_path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError, match="not a benchmark result file") as caught:
        read_result(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_file_of_another_benchmark_or_none_at_all_is_refused(tmp_path: Path) -> None:
    path = _written(tmp_path)
    with pytest.raises(ResultFileError, match="holds benchmark 'cli', not 'sandbox'"):
        read_result(path, "sandbox")
    with pytest.raises(ResultFileError, match="No such file"):
        read_result(tmp_path / "missing.json")


def test_runs_append_to_a_file_of_the_same_parameters_only(tmp_path: Path) -> None:
    path = tmp_path / "stream.json"
    append_run(path, "stream", {"tasks": 300}, {"rate": 21.1})
    append_run(path, "stream", {"tasks": 300}, {"rate": 17.2})
    assert read_result(path, "stream").results == {"runs": [{"rate": 21.1}, {"rate": 17.2}]}
    with pytest.raises(ResultFileError, match="write a new file"):
        append_run(path, "stream", {"tasks": 30}, {"rate": 9.0})
    with pytest.raises(ResultFileError, match="not 'stream'"):
        append_run(_written(tmp_path), "stream", {"tasks": 300}, {"rate": 9.0})
    assert len(read_result(path).results["runs"]) == 2


def test_text_is_refused_when_writing_too(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("results.speed is '1.07 episodes/s'")):
        write_result(tmp_path / "x.json", "run", {}, {"speed": "1.07 episodes/s"})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_every_committed_result_file_is_well_formed(path: Path) -> None:
    read_result(path)
