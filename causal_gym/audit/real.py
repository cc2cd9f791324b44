"""The real suite: the seed suite itself (rows, report, tables, plots: honest answers,
the interval sweep, the hack probes, the third-party AIPW analyst, the bayes-prior
probe, the more efficient OLS analyst, the leakage check) pointed at the real tier:
eval-real-v1, or the real train tasks of its families under several keys. Its report
is causal_gym/audit/reports/real.json."""

from __future__ import annotations

import dataclasses

from causal_gym.audit.seed.suite import SUITE as SEED

SUITE = dataclasses.replace(
    SEED,
    name="real",
    split="eval-real-v1",
    about="the real tier of ate, adjustment, null_detect: the seed suite's protocol",
    committed="audit/reports/real.json",
    tier="real",
    # One tier: its families are its slices (audit/slices.py), so no slices table.
    tables={name: draw for name, draw in SEED.tables.items() if name != "slices"},
)
