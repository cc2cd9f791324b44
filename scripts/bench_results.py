"""The one result file every benchmark writes, and the one reader the docs tables use.

Each scripts/bench_*.py takes `--json PATH` and hands its numbers to `write_result`;
scripts/docs_tables.py draws the docs' tables from those files with `read_result`. So
a benchmark number in the docs is measured, never typed, and a table's wording and
precision live in one place (the table function), not in the file: the file holds raw
numbers (seconds, counts, ratios as floats), never formatted strings. A file of the
wrong shape is refused here, at the boundary, with the file's name, rather than as a
KeyError inside a table.

    {"benchmark": "cli", "parameters": {...}, "machine": {"cpus": 2, "python": "3.11.9",
     "platform": "Linux-..."}, "date": "2026-12-02", "results": {...}}
"""

from __future__ import annotations

import datetime
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)


class Machine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cpus: StrictInt
    python: StrictStr
    platform: StrictStr


class BenchResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: StrictStr
    parameters: dict[str, Any]
    machine: Machine
    date: datetime.date
    results: dict[str, Any]

    @field_validator("results")
    @classmethod
    def _raw_numbers(cls, results: dict[str, Any]) -> dict[str, Any]:
        _check_raw(results, "results")
        return results


class ResultFileError(ValueError):
    """A result file that is missing, not JSON of the expected shape, or of another
    benchmark."""


def _check_raw(value: object, where: str) -> None:
    """Results are nested objects and lists whose leaves are numbers (or booleans)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_raw(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_raw(item, f"{where}[{index}]")
    elif not isinstance(value, float | int):  # bool is an int
        raise ValueError(f"{where} is {value!r}: results hold raw numbers, not text")


def this_machine() -> Machine:
    return Machine(
        cpus=os.cpu_count() or 1,
        python=platform.python_version(),
        platform=platform.platform(),
    )


def make_result(benchmark: str, parameters: dict[str, Any], results: dict[str, Any]) -> BenchResult:
    """A result of this machine, dated today (validated: raw numbers only)."""
    return BenchResult(
        benchmark=benchmark,
        parameters=parameters,
        machine=this_machine(),
        date=datetime.date.today(),
        results=results,
    )


def save(path: str | Path, result: BenchResult) -> Path:
    """Write `result` to `path` atomically: a temp file beside it, then os.replace, so
    a reader never sees half a file and an interrupted run leaves the old one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(result.model_dump_json(indent=2) + "\n")
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target


def write_result(
    path: str | Path, benchmark: str, parameters: dict[str, Any], results: dict[str, Any]
) -> Path:
    """One benchmark run's raw numbers as `path` (replacing any earlier file)."""
    return save(path, make_result(benchmark, parameters, results))


def read_result(path: str | Path, benchmark: str | None = None) -> BenchResult:
    """The validated result file at `path`; with `benchmark`, it must be that one's."""
    try:
        result = BenchResult.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError) as exc:
        raise ResultFileError(f"{path}: not a benchmark result file: {exc}") from exc
    if benchmark is not None and result.benchmark != benchmark:
        raise ResultFileError(f"{path}: holds benchmark {result.benchmark!r}, not {benchmark!r}")
    return result


def append_run(
    path: str | Path, benchmark: str, parameters: dict[str, Any], run: dict[str, Any]
) -> BenchResult:
    """Add one run to the file's `results.runs` (a new file if there is none), for a
    benchmark whose page shows several runs side by side. The runs of one file share
    their parameters and machine; the date becomes the latest run's."""
    fresh = make_result(benchmark, parameters, {"runs": [run]})
    if not Path(path).exists():
        save(path, fresh)
        return fresh
    old = read_result(path, benchmark)
    if old.parameters != fresh.parameters or old.machine.cpus != fresh.machine.cpus:
        raise ResultFileError(
            f"{path}: its runs were made with {old.parameters} on {old.machine.cpus} CPUs, "
            f"this one with {fresh.parameters} on {fresh.machine.cpus}: write a new file"
        )
    runs = old.results.get("runs")
    if not isinstance(runs, list):
        raise ResultFileError(f"{path}: results hold no list of runs")
    merged = fresh.model_copy(update={"results": {"runs": [*runs, run]}})
    save(path, merged)
    return merged
