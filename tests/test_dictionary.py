"""Staged data respects its own data dictionary (issue 13).

Read only what an agent reads: the README's column table and data.csv. Every value of
every column must be possible under the type the table documents; the one documented
exception is a few gross errors in the outcome, which must then look like errors (far
out in the outcome's own robust spread), not like a quiet drift past a bound.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import re
import statistics
from collections.abc import Callable

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
    return checker(kind, text)(cell)


def checker(kind: str, text: str) -> Callable[[str], bool]:
    """The test `possible` applies to a cell of a column documented as `kind`, built
    once a column (a table's kind is read once, not once a cell)."""
    if kind == "binary":
        return lambda cell: cell in ("0", "1")
    if kind == "categorical":
        found = LEVELS.search(text)
        return lambda cell: found is not None and f"`{cell}`" in found.group(1)
    if kind == "count (integer >= 0)":
        return lambda cell: INTEGER.match(cell) is not None and int(cell) >= 0
    if kind == "number":
        return lambda cell: math.isfinite(float(cell))
    if kind == "positive number":
        return lambda cell: math.isfinite(value := float(cell)) and value > 0
    bounded = RANGE.match(kind)
    if bounded is None:

        def undocumented(cell: str) -> bool:
            if not math.isfinite(float(cell)):
                return False
            raise AssertionError(f"undocumented column type {kind!r}")

        return undocumented
    whole, low, high = bounded.groups()
    lowest, highest = float(low), float(high)

    def in_range(cell: str) -> bool:
        value = float(cell)
        if not math.isfinite(value):
            return False
        if whole == "integer" and INTEGER.match(cell) is None:
            return False
        return lowest <= value <= highest

    return in_range


def all_possible(kind: str, text: str, values: set[str]) -> bool:
    """Whether every one of `values` is possible: `all(checker(kind, text)(v) for v in
    values)` (the same answer; the same ValueError on a cell that is no number), with
    the loops over a column's values run by C builtins rather than one call a value."""
    bounded = RANGE.match(kind)
    if kind in ("number", "positive number") or bounded is not None:
        numbers = list(map(float, values))
        if not all(map(math.isfinite, numbers)):
            return False
        if kind == "number" or not numbers:
            return True
        if kind == "positive number":
            return min(numbers) > 0
        assert bounded is not None
        whole, low, high = bounded.groups()
        if whole == "integer" and not all(map(INTEGER.match, values)):
            return False
        return float(low) <= min(numbers) and max(numbers) <= float(high)
    if kind == "binary":
        return values <= {"0", "1"}
    if kind == "count (integer >= 0)":
        return all(map(INTEGER.match, values)) and all(int(v) >= 0 for v in values)
    return all(map(checker(kind, text), values))


def violations(task: Task) -> list[str]:
    """Every staged csv (obs_vs_rct's trial.csv too) against the one dictionary."""
    found = []
    for name, data in task.public.files.items():
        if name.endswith(".csv"):
            found += file_violations(task, data)
    return found


def file_violations(task: Task, data: bytes) -> list[str]:
    columns = columns_of(task)
    header, *rows = csv.reader(io.StringIO(data.decode()))
    if [] in rows:  # a blank line is no row (csv.DictReader skips it too)
        rows = [row for row in rows if row]
    ragged = [i for i, row in enumerate(rows) if len(row) != len(header)]
    assert not ragged, f"{task.public.task_id}: rows {ragged[:3]} do not have {len(header)} cells"
    by_name = dict(
        zip(header, list(zip(*rows, strict=True)) if rows else [()] * len(header), strict=True)
    )
    found = []
    for name, (timing, kind, text) in columns.items():
        if timing == "treatment":
            continue
        # each distinct value is checked once (a binary column of 5,000 rows is two
        # checks), and the cells are listed one by one only in a column with a bad one
        distinct = set(by_name[name])
        distinct.discard("")
        if all_possible(kind, text, distinct):
            continue
        cells = [c for c in by_name[name] if c != ""]
        test = checker(kind, text)
        bad = [c for c in cells if not test(c)]
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


#: For each kind of column: its text in the table, a possible and an impossible value.
KINDS = [
    ("binary", "", "1", "2"),
    ("categorical", "one of `a`, `b`", "b", "c"),
    ("number", "", "-3.5", "inf"),
    ("positive number", "", "12.5", "0.000"),
    ("count (integer >= 0)", "", "3", "-1"),
    ("number in [0, 10]", "", "10", "-0.606"),
    ("integer in [0, 10]", "", "3", "3.5"),
]


@pytest.mark.parametrize(("kind", "text", "good", "bad"), KINDS)
def test_the_column_check_answers_as_the_cell_check(
    kind: str, text: str, good: str, bad: str
) -> None:
    """`violations` checks a column's distinct values at once and lists cells one by
    one only when that fails: both say the same of every value."""
    assert possible(kind, text, good) and all_possible(
        kind, text, {good, "0" if kind == "binary" else good}
    )
    assert not possible(kind, text, bad) and not all_possible(kind, text, {good, bad})


def test_values_planted_in_a_staged_table_are_reported() -> None:
    """An impossible value in one column of each kind of a real table: each is reported
    (outcome columns aside: there a far-out value is a documented gross error)."""
    task = cached_task("train:adjustment:0")
    staged = task.public.files["data.csv"]
    header, *rows = [line.split(",") for line in staged.decode().splitlines()]
    assert ("\n".join(",".join(row) for row in [header, *rows]) + "\n").encode() == staged
    planted = {}
    for name, (timing, kind, text) in columns_of(task).items():
        if timing in ("treatment", "outcome") or kind in planted.values():
            continue
        bad = {"binary": "2", "categorical": "no_such_level"}.get(kind, "inf")
        assert not possible(kind, text, bad)
        rows[7][header.index(name)] = bad
        planted[name] = kind
    assert len(planted) >= 4, planted
    lines = [",".join(row) for row in [header, *rows]]
    files = {**task.public.files, "data.csv": ("\n".join(lines) + "\n").encode()}
    broken = dataclasses.replace(task, public=dataclasses.replace(task.public, files=files))
    assert violations(task) == []
    assert sorted(line.split()[1] for line in violations(broken)) == sorted(planted)


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
