"""A table of an audit's numbers, drawn once and shown two ways: as Markdown in the
docs (scripts/docs_tables.py writes it between a page's table markers) and in the
terminal after a run (the CLI renders it with rich). One drawing for both keeps the
page and the terminal from telling different numbers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    #: The column names; `align` has one letter per column: "l" text, "r" numbers.
    header: tuple[str, ...]
    align: str
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        widths = {len(self.header), len(self.align), *(len(r) for r in self.rows)}
        if len(widths) != 1 or set(self.align) - {"l", "r"}:
            raise ValueError(f"a table's header, align and rows disagree: {self.header}")

    def markdown(self) -> list[str]:
        rule = " | ".join("---:" if a == "r" else "---" for a in self.align)
        lines = [f"| {' | '.join(self.header)} |", f"| {rule} |"]
        return lines + [f"| {' | '.join(row)} |" for row in self.rows]


def table(header: Sequence[str], align: str, rows: Iterable[Sequence[str]]) -> Table:
    return Table(header=tuple(header), align=align, rows=tuple(tuple(r) for r in rows))
