r"""data.csv bytes with a fixed float format, so the same task is the same bytes.

Each continuous column is written with a fixed number of decimals (chosen from the
column's spread), blanks are empty cells, lines end in `\n`. Values never contain
commas or quotes, which this module checks rather than quoting.

The bytes are exactly Python's `f"{value:.{decimals}f}"` for every value (correctly
rounded from the double, a minus sign on every negative value, -0.0 included), but
built for a whole column at once: a task has tens of thousands of cells, and
formatting them one by one was a third of a linear task's generation time. Each
column becomes a matrix of ASCII bytes (one row per CSV row, cells right-aligned and
padded with NUL bytes), the columns are laid side by side with the commas and
newlines, and the padding is dropped in one pass. The few values whose scaled
magnitude lies within rounding error of a half are formatted by Python itself, so no
tie is ever decided differently.
"""

from __future__ import annotations

import numpy as np

from causal_gym.scm.marginals import ValueKind
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind
from causal_gym.staging.mess import MessyFrame
from causal_gym.staging.naming import ColumnSpec, Naming

_DIGITS = np.frombuffer(b"0123456789", dtype=np.uint8)


def _staged_values(values: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    staged = spec.mean + spec.sd * values
    if spec.decimals == 0:  # counts and integer scores: exact integers, never "-0"
        return np.rint(staged) + 0.0
    if spec.value_kind is ValueKind.POSITIVE and spec.node_id != OUTCOME_ID:
        # A gamma draw can round to zero; the smallest positive value at this precision
        # is a rounding-sized change, like every other rounding in the file.
        smallest = 10.0**-spec.decimals
        return np.where(staged < smallest, smallest, staged)
    return np.asarray(staged, dtype=np.float64)


def _scaled_integers(staged: np.ndarray, decimals: int) -> np.ndarray:
    """|value| x 10^decimals rounded as Python's formatting rounds it (ties to even on
    the exact double), for finite values."""
    magnitude = np.abs(staged) * 10.0**decimals
    rounded = np.rint(magnitude)
    fraction = magnitude - np.floor(magnitude)
    near_half = np.abs(fraction - 0.5) <= 1e-6 + 4e-16 * magnitude
    if near_half.any():  # let Python decide: it sees the exact binary value
        for index in np.flatnonzero(near_half).tolist():
            text = f"{abs(float(staged[index])):.{decimals}f}".replace(".", "")
            rounded[index] = float(int(text))
    return rounded.astype(np.int64)


def _numeric_cells(values: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    """The column's cells as a (rows x width) byte matrix, NUL where nothing is."""
    staged = _staged_values(values, spec)
    decimals = spec.decimals
    present = ~np.isnan(staged)
    scaled = np.zeros(staged.shape, dtype=np.int64)
    if present.any():
        scaled[present] = _scaled_integers(staged[present], decimals)
    if scaled.size and int(scaled.max()) >= 10**17:
        raise ValueError(f"column {spec.name}: a value too large to stage exactly")
    whole, part = np.divmod(scaled, 10**decimals)
    width_whole = max(1, len(str(int(whole.max())))) if whole.size else 1
    width = 1 + width_whole + (1 + decimals if decimals else 0)
    cells = np.zeros((staged.shape[0], width), dtype=np.uint8)
    negative = present & np.signbit(staged)
    cells[negative, 0] = ord("-")
    for place in range(width_whole):  # whole digits, right-aligned, no leading zeros
        digit = (whole // 10**place) % 10
        shown = present & ((whole >= 10**place) | (place == 0))
        cells[shown, width_whole - place] = _DIGITS[digit[shown]]
    if decimals:
        cells[present, 1 + width_whole] = ord(".")
        for place in range(decimals):
            digit = (part // 10 ** (decimals - 1 - place)) % 10
            cells[present, 2 + width_whole + place] = _DIGITS[digit[present]]
    return cells


def _label_cells(codes: np.ndarray, labels: list[str]) -> np.ndarray:
    """Cells of a coded column: label `codes[i]`, or nothing where the code is NaN."""
    encoded = [label.encode("ascii") for label in labels]
    width = max(len(label) for label in encoded)
    table = np.zeros((len(encoded) + 1, width), dtype=np.uint8)  # last row: a blank
    for index, label in enumerate(encoded):
        table[index, width - len(label) :] = np.frombuffer(label, dtype=np.uint8)
    rows = np.where(np.isnan(codes), len(encoded), np.nan_to_num(codes, nan=0.0))
    return table[rows.astype(np.int64)]


def column_cells(frame: MessyFrame, spec: ColumnSpec) -> np.ndarray:
    if spec.node_id == TREATMENT_ID:
        tokens = [str(token) for token in frame.treatment_tokens.tolist()]
        labels = sorted(set(tokens))
        position = {label: i for i, label in enumerate(labels)}
        codes = np.array([position[t] for t in tokens], dtype=np.float64)
        return _label_cells(codes, labels)
    values = frame.numeric[spec.node_id]
    if spec.kind is Kind.BINARY:
        return _label_cells(values, ["0", "1"])
    if spec.kind is Kind.CATEGORICAL:
        return _label_cells(values, list(spec.levels))
    return _numeric_cells(values, spec)


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


def render_csv(frame: MessyFrame, naming: Naming) -> bytes:
    specs = [naming.columns[node_id] for node_id in frame.column_order]
    header = ",".join(spec.name for spec in specs)
    n_rows = frame.n_rows
    separator = np.full((n_rows, 1), ord(","), dtype=np.uint8)
    end = np.full((n_rows, 1), ord("\n"), dtype=np.uint8)
    pieces: list[np.ndarray] = []
    for spec in specs:
        pieces += [column_cells(frame, spec), separator]
    pieces[-1] = end
    body = np.hstack(pieces).tobytes().replace(b"\x00", b"")
    text = f"{header}\n".encode("ascii") + body
    if b'"' in text or text.count(b",") != (len(specs) - 1) * (n_rows + 1):
        raise ValueError(
            "a staged value contains a comma or quote; refusing to write ambiguous CSV"
        )
    return text
