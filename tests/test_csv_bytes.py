"""The column-at-once CSV writer against the one-value-at-a-time formatting it replaced
(Python's own fixed-point format), on random values, ties and edge cases. The frozen
manifests pin the same on every staged file of eval-v1, eval-v2 and eval-expert-v1."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import Kind, Timing
from causal_gym.staging.csv_bytes import _label_cells, _numeric_cells
from causal_gym.staging.naming import ColumnSpec


def spec(decimals: int, kind: ValueKind | None = ValueKind.REAL) -> ColumnSpec:
    return ColumnSpec(
        node_id="x1", name="x", timing=Timing.PRE, kind=Kind.CONTINUOUS, description="",
        mean=0.0, sd=1.0, decimals=decimals, value_kind=kind,
    )  # fmt: skip


def as_text(cells: np.ndarray) -> list[str]:
    return [row.tobytes().replace(b"\x00", b"").decode() for row in cells]


def one_by_one(values: np.ndarray, column: ColumnSpec) -> list[str]:
    """The writer it replaced, cell by cell."""
    staged = column.mean + column.sd * values
    if column.decimals == 0:
        staged = np.rint(staged) + 0.0
    elif column.value_kind is ValueKind.POSITIVE:
        smallest = 10.0**-column.decimals
        staged = np.where(staged < smallest, smallest, staged)
    return [f"{v:.{column.decimals}f}" if v == v else "" for v in staged.tolist()]


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)
ties = st.integers(-(10**8), 10**8).map(lambda k: (k + 0.5) / 10**4)  # x.xxxx5: halves


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.one_of(finite, ties, st.just(float("nan")), st.just(-0.0)), min_size=1,
                    max_size=60),
    decimals=st.integers(0, 4),
    positive=st.booleans(),
)  # fmt: skip
def test_columns_are_written_as_python_formats_each_value(
    values: list[float], decimals: int, positive: bool
) -> None:
    array = np.array(values, dtype=np.float64)
    column = spec(decimals, ValueKind.POSITIVE if positive else ValueKind.REAL)
    assert as_text(_numeric_cells(array, column)) == one_by_one(array, column)


def test_edge_values() -> None:
    array = np.array([0.00005, 0.00015, -0.00005, -0.0, 2.5, 3.5, 1e9 + 0.5, np.nan, 0.0])
    for decimals in range(5):
        column = spec(decimals)
        assert as_text(_numeric_cells(array, column)) == one_by_one(array, column)


def test_labels_and_blanks() -> None:
    codes = np.array([0.0, 2.0, np.nan, 1.0])
    assert as_text(_label_cells(codes, ["low", "mid", "high"])) == ["low", "high", "", "mid"]
