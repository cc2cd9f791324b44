"""Place the columns computed from parents inside their documented ranges.

A node with parents is a linear combination, written as location + scale * value. An
affine map changes neither the causal structure nor what an adjusted regression can
recover, so location and scale are free to respect the column's unit: the scale is
the theme's typical SD, shrunk where needed so that every bound of the column's kind
lies at least SAFETY_SDS of the column's own spread away from its location. At eight
SDs a Gaussian tail holds about 6e-16 of the values; no staged value crosses a bound
in practice. The outcome keeps scale 1 (the ATE is in its units) and only moves its
location. Roots need no placement: they were drawn from their marginal, or are a
real table's column.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from causal_gym.scm.model import OUTCOME_ID
from causal_gym.scm.sample import CleanSample
from causal_gym.staging.naming import ColumnSpec, Naming, decimals_for

SAFETY_SDS = 8.0


def _room(spec: ColumnSpec, location: float) -> float:
    """Distance from `location` to the nearest documented bound (inf when unbounded)."""
    room = math.inf
    if spec.low is not None:
        room = min(room, location - spec.low)
    if spec.high is not None:
        room = min(room, spec.high - location)
    return room


def _place_outcome(spec: ColumnSpec, spread: float) -> ColumnSpec:
    margin = SAFETY_SDS * spread
    low = -math.inf if spec.low is None else spec.low + margin
    high = math.inf if spec.high is None else spec.high - margin
    if low > high:
        raise ValueError(f"outcome {spec.name} spans too narrow a range for its spread")
    return dataclasses.replace(spec, mean=min(max(spec.mean, low), high))


def _place_derived(spec: ColumnSpec, spread: float) -> ColumnSpec:
    room = _room(spec, spec.mean)
    if room <= 0:
        raise ValueError(f"column {spec.name} has its typical value outside its own bounds")
    scale = min(spec.sd, room / (SAFETY_SDS * spread)) if spread > 0 else spec.sd
    return dataclasses.replace(spec, sd=scale, decimals=decimals_for(scale * max(spread, 1e-9)))


def place_columns(naming: Naming, sample: CleanSample) -> Naming:
    """Location and scale of every numeric column that has no marginal of its own."""
    placed = dict(naming.columns)
    for node_id, spec in naming.columns.items():
        if spec.value_kind is None or spec.marginal is not None or spec.real:
            continue
        spread = float(np.std(sample.columns[node_id]))
        if node_id == OUTCOME_ID:
            placed[node_id] = _place_outcome(spec, spread)
        else:
            placed[node_id] = _place_derived(spec, spread)
    return Naming(naming.theme, placed)
