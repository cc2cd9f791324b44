"""The honest reference: the sandbox kit (analyst.py, flexible.py, posterior.py,
estimands.py, answer.py; self-contained) and the probes the audits run."""

from causal_gym.reference.analyst import (
    DataDictionary,
    ReferenceFit,
    fit_reference,
    outcome_scale,
    parse_readme,
    read_staged,
)
from causal_gym.reference.answer import analyze_directory, reference_submission

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
