"""A design family's candidate task: what its hooks draw, before the shared build step
(generate/design_task.py) writes the README, runs the reference on the staged bytes
and seals the truth.

The seed families share one SCM builder; a design family draws from a model of its
own (an instrument and an unobserved confounder, a staggered panel, a running
variable), so what it returns is already staged: the bytes of data.csv, the public
dictionary that describes them, and, sealed, the exact truth of the estimand the task
names and the width anchor r, a property of the model at the task's size.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from causal_gym.sealed import Sealed
from causal_gym.staging.source_note import SourceNote


@dataclass(frozen=True)
class ColumnDoc:
    """One column of data.csv as the README's table lists it."""

    name: str
    kind: str  # "id", "date", "numeric", "binary", "categorical"
    description: str


@dataclass(frozen=True)
class DesignDictionary:
    """Everything the README says, in public words. `design` holds the Design section's
    facts as (key, value) pairs, in order: the reference kit reads them back
    (reference/designs.py), so the keys are fixed per family and the values plain."""

    title: str
    intro: str
    question: str
    design: tuple[tuple[str, str], ...]
    assumptions: tuple[str, ...]
    columns: tuple[ColumnDoc, ...]
    notes: tuple[str, ...] = ()
    #: A real-tier task's study (the README's Source section); None otherwise.
    source: SourceNote | None = None

    def fact(self, key: str) -> str:
        """One design fact's value (KeyError when the family did not declare it)."""
        for name, value in self.design:
            if name == key:
                return value
        raise KeyError(key)


@dataclass(frozen=True, repr=False)
class DesignCandidate(Sealed):
    """A drawn, staged design task with its sealed truth.

    `truth` is the exact value of `estimand` from the model (not a sample estimate);
    `anchor_width` is r, the 90% width of an efficient design estimator at the task's
    size computed from the model; `subtier` is the hidden difficulty cell the audit's
    leakage check asks about (a weak instrument, a staggered adoption with dynamic
    effects, a curved conditional mean)."""

    data_csv: bytes
    dictionary: DesignDictionary
    estimand: str
    truth: float
    anchor_width: float
    subtier: str
    treatment: str
    outcome: str
    #: The staged row count the plan asked for: what a frozen split's manifest pins and
    #: regenerates the task from (a panel's data.csv may hold a few rows more or fewer:
    #: its missing unit-periods and re-sent copies).
    n_rows: int
    latent: tuple[str, ...] = ()
    roles: Mapping[str, str] = field(default_factory=dict)
    edges: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class DesignRejection:
    """Why a candidate was redrawn (a failed certificate: too weak an instrument for
    the tier, an empty cohort, too few rows near the cutoff)."""

    reasons: tuple[str, ...]
