"""The honest reference analyst (self-contained; see analyst.py)."""

from causal_gym.reference.analyst import (
    DataDictionary,
    ReferenceFit,
    analyze_directory,
    fit_reference,
    outcome_scale,
    parse_readme,
    read_staged,
    reference_submission,
)

__all__ = [
    "DataDictionary",
    "ReferenceFit",
    "analyze_directory",
    "fit_reference",
    "outcome_scale",
    "parse_readme",
    "read_staged",
    "reference_submission",
]
