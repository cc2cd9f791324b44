"""A named quantity a task asks for, with what its answer is scored against.

A task's truth is a mapping of these by name (`HiddenTruth.estimands`): "ate" for
today's families; a family with several estimands (per-level effects, direct and
indirect effects) declares their names and scores each against its own entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from causal_gym.sealed import Sealed


@dataclass(frozen=True, repr=False)
class Estimand(Sealed):
    """The exact value, the reference analysis of the staged data (estimate, standard
    error, honest 90% width) and the observable scale the loss is divided by. Sealed:
    the value is the answer. An expert task keeps no reference fit (its width is the
    efficiency bound's, and generation fits nothing): estimate and SE are None."""

    value: float
    reference_estimate: float | None
    reference_se: float | None
    reference_width: float
    scale: float
    #: The level of the interval score in the loss (scoring/reward.py): 0.12 where r is
    #: the reference's own 90% width (eval-v2, reward version 2); 0.10, the proper
    #: score of a 90% interval, where r is a property of the task (an efficiency
    #: bound, the optimal OLS's width, a multi-estimand family's anchor.py).
    interval_alpha: float = 0.12
