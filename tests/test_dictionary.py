"""Staged data respects its own data dictionary (issue 13).

Read only what an agent reads: the README's column table and data.csv. Every value of
every column must be possible under the type the table documents; the one documented
exception is a few gross errors in the outcome, which must then look like errors (far
out in the outcome's own robust spread), not like a quiet drift past a bound.
"""

from __future__ import annotations

import csv
import io
import math
import re
import statistics

import pytest

from causal_gym import Task, generate_task
from causal_gym.rng_keys import DerivationKey, parse_key_hex
from tests.conftest import FAMILIES, OTHER_KEY_HEX, SHARED_SAMPLE, cached_task

ROW = re.compile(r"^\| `([^`]+)` \| ([a-z-]+) \| ([^|]+?) \| (.*) \|$", re.MULTILINE)
RANGE = re.compile(r"^(number|integer) in \[(-?[\d.]+), (-?[\d.]+)\]$")
LEVELS = re.compile(r"one of ((?:`[^`]+`(?:, )?)+)")
INTEGER = re.compile(r"^-?\d+$")
#: Gross outcome errors sit 10-16 robust SDs out; a value past a bound but nearer than
#: this to the median would be a placement failure, not a documented error.
GROSS = 6.0


def columns_of(task: Task) -> dict[str, tuple[str, str, str]]:
    readme = task.public.files["README.md"].decode()
    return {name: (timing, kind, text) for name, timing, kind, text in ROW.findall(readme)}


def possible(kind: str, text: str, cell: str) -> bool:
    """Is `cell` a value the documented `kind` allows?"""
    if kind == "binary":
        return cell in ("0", "1")
    if kind == "categorical":
        found = LEVELS.search(text)
        return found is not None and f"`{cell}`" in found.group(1)
    if kind == "count (integer >= 0)":
        return INTEGER.match(cell) is not None and int(cell) >= 0
    value = float(cell)
    if not math.isfinite(value):
        return False
    if kind == "number":
        return True
    if kind == "positive number":
        return value > 0
    bounded = RANGE.match(kind)
    if bounded is None:
        raise AssertionError(f"undocumented column type {kind!r}")
    whole, low, high = bounded.groups()
    if whole == "integer" and INTEGER.match(cell) is None:
        return False
    return float(low) <= value <= float(high)


def violations(task: Task) -> list[str]:
    """Every staged csv (obs_vs_rct's trial.csv too) against the one dictionary."""
    found = []
    for name, data in task.public.files.items():
        if name.endswith(".csv"):
            found += file_violations(task, data)
    return found


def file_violations(task: Task, data: bytes) -> list[str]:
    columns = columns_of(task)
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    found = []
    for name, (timing, kind, text) in columns.items():
        if timing == "treatment":
            continue
        cells = [row[name] for row in rows if row[name] != ""]
        bad = [c for c in cells if not possible(kind, text, c)]
        if timing == "outcome" and bad:
            values = [float(c) for c in cells]
            median = statistics.median(values)
            mad = 1.4826 * statistics.median(abs(v - median) for v in values)
            bad = [c for c in bad if abs(float(c) - median) < GROSS * mad]
        found += [f"{task.public.task_id} {name} ({kind}): {c}" for c in bad[:3]]
    return found


def test_every_kind_of_column_is_documented_and_staged_in_the_sample() -> None:
    kinds = set()
    for task_id in SHARED_SAMPLE:
        task = cached_task(task_id)
        assert violations(task) == []
        kinds |= {RANGE.sub(r"\1 in range", k) for _, k, _ in columns_of(task).values()}
    assert kinds >= {
        "binary",
        "categorical",
        "coded",
        "number",
        "positive number",
        "count (integer >= 0)",
        "number in range",
        "integer in range",
    }


def test_the_checker_catches_impossible_values() -> None:
    assert not possible("count (integer >= 0)", "", "-1")
    assert not possible("count (integer >= 0)", "", "2.5")
    assert not possible("positive number", "", "0.000")
    assert not possible("number in [0, 10]", "", "-0.606")
    assert not possible("integer in [0, 10]", "", "3.5")
    assert not possible("binary", "", "2")
    assert possible("integer in [1, 5]", "", "5") and possible("number in [-1, 1]", "", "-1.0")


KEYS = {"default": None, "other": OTHER_KEY_HEX, "third": "a7" * 32}


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("key_name", sorted(KEYS))
def test_thousands_of_tasks_under_three_keys_respect_their_dictionary(
    key_name: str, family: str, default_key: DerivationKey
) -> None:
    """3 keys x 6 families x 240 train tasks (4,320 in all), spread across tiers."""
    hex_key = KEYS[key_name]
    key = default_key if hex_key is None else parse_key_hex(hex_key, "test")
    problems: list[str] = []
    for index in range(240):
        problems += violations(generate_task(f"train:{family}:{index * 7919}", key))
    assert problems == []
