"""The README's Source section: the real study a task's columns come from.

A real-tier task is semi-synthetic (the study's covariates, a hidden model's treatment
and outcome), and says so; the NSW reality check is real end to end, and says that.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceNote:
    """What a real task's README says of the study its columns come from."""

    title: str
    citation: str
    table_rows: int
    #: False for a file that is real end to end (the NSW reality check).
    semi_synthetic: bool = True
    #: What the hidden model generated, where it is not the covariate tier's
    #: treatment, outcome and some other columns (a design table's real tier).
    generated: str | None = None

    def lines(self, treatment: str, outcome: str) -> list[str]:
        if not self.semi_synthetic:
            return [
                "## Source",
                "",
                f"Every cell is a real record: {self.title}; {self.citation}. Nothing is "
                "simulated, so no model of this file knows the answer.",
                "",
            ]
        return [
            "## Source",
            "",
            f"The {self.table_rows} complete records of a real study supply this extract: "
            f"{self.title}; {self.citation}. Its rows are a random subset of them, and "
            "the columns taken from the study keep its names, units and codes. "
            + (
                self.generated
                or f"The intervention `{treatment}`, the outcome `{outcome}` and some of the "
                "other columns were generated from the study's records by a hidden model (a "
                "semi-synthetic design), so the true effect is known exactly."
            )
            + " Any two columns "
            "taken from the study may share causes that no column records.",
            "",
        ]
