"""data.csv bytes with a fixed float format, so the same task is the same bytes.

Each continuous column is written with a fixed number of decimals (chosen from the
column's spread), blanks are empty cells, lines end in `\\n`. Values never contain
commas or quotes, which this module checks rather than quoting.
"""

from __future__ import annotations

import numpy as np

from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind
from causal_gym.staging.mess import MessyFrame
from causal_gym.staging.naming import ColumnSpec, Naming


def _format_numeric(values: np.ndarray, spec: ColumnSpec) -> list[str]:
    staged = spec.mean + spec.sd * values
    if spec.decimals == 0:  # counts and integer scores: exact integers, never "-0"
        staged = np.rint(staged) + 0.0
    elif spec.value_kind is ValueKind.POSITIVE and spec.node_id != OUTCOME_ID:
        # A gamma draw can round to zero; the smallest positive value at this precision
        # is a rounding-sized change, like every other rounding in the file.
        smallest = 10.0**-spec.decimals
        staged = np.where(staged < smallest, smallest, staged)
    fmt = f"{{:.{spec.decimals}f}}".format
    return [fmt(v) if v == v else "" for v in staged.tolist()]


def out_of_bounds(frame: MessyFrame, naming: Naming) -> list[str]:
    """Columns (other than the outcome, whose gross errors the README owns up to) with
    a staged value outside the bounds their dictionary entry documents. Placement keeps
    8 SDs of room, but a skewed root's child can still reach past it in a large file;
    the multi-estimand families reject such a candidate rather than stage it."""
    bad = []
    for node_id, values in frame.numeric.items():
        spec = naming.columns[node_id]
        if node_id == OUTCOME_ID or spec.value_kind is None:
            continue
        # as written: rounded to the column's decimals, so exact integers stay exact
        staged = np.round(spec.mean + spec.sd * values[~np.isnan(values)], spec.decimals)
        low = -np.inf if spec.low is None else spec.low
        high = np.inf if spec.high is None else spec.high
        if spec.value_kind is ValueKind.POSITIVE:
            low = 0.0  # formatting lifts a rounding-sized zero to the smallest positive
        if staged.size and (staged.min() < low or staged.max() > high):
            bad.append(spec.name)
    return bad


def _format_codes(values: np.ndarray, labels: tuple[str, ...]) -> list[str]:
    return [labels[int(v)] if v == v else "" for v in values.tolist()]


def format_column(frame: MessyFrame, spec: ColumnSpec) -> list[str]:
    if spec.node_id == TREATMENT_ID:
        return [str(token) for token in frame.treatment_tokens.tolist()]
    values = frame.numeric[spec.node_id]
    if spec.kind is Kind.BINARY:
        return _format_codes(values, ("0", "1"))
    if spec.kind is Kind.CATEGORICAL:
        return _format_codes(values, spec.levels)
    return _format_numeric(values, spec)


def render_csv(frame: MessyFrame, naming: Naming) -> bytes:
    specs = [naming.columns[node_id] for node_id in frame.column_order]
    header = ",".join(spec.name for spec in specs)
    cells = [format_column(frame, spec) for spec in specs]
    body = "\n".join(",".join(row) for row in zip(*cells, strict=True))
    text = f"{header}\n{body}\n"
    if '"' in text or text.count(",") != (len(specs) - 1) * (frame.n_rows + 1):
        raise ValueError(
            "a staged value contains a comma or quote; refusing to write ambiguous CSV"
        )
    return text.encode("ascii")
