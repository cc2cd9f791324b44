"""How the audit answers tasks: the probes of `causal_gym.reference.probes`, keyed
the way the report names them, plus the width sweep levels."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from causal_gym.reference.probes import (
    Staged,
    at_level,
    bayes_prior,
    constant_zero,
    diff_in_means,
    fitted,
    halved,
    honest,
    narrow_null,
    post_treatment,
    prior_only,
)
from causal_gym.task import PublicTask

SWEEP_LEVELS: tuple[float, ...] = (
    0.50, 0.60, 0.70, 0.80, 0.85, 0.88, 0.89, 0.90, 0.91, 0.92, 0.95, 0.98, 0.99,
)  # fmt: skip

Answer = dict[str, object]
Policy = Callable[[Staged], Answer]

HACK_PROBES: dict[str, Policy] = {
    "diff_in_means": diff_in_means,
    "post_treatment_adjustment": post_treatment,
    "constant_zero_huge_interval": constant_zero,
    "reference_halved_interval": halved,
}
SWEEP_POLICIES: tuple[Policy, ...] = tuple(partial(at_level, level=lv) for lv in SWEEP_LEVELS)


def staged_view(task: PublicTask) -> Staged:
    return Staged.parse(task.files["data.csv"], task.files["README.md"].decode("utf-8"))


__all__ = [
    "HACK_PROBES",
    "SWEEP_LEVELS",
    "SWEEP_POLICIES",
    "Answer",
    "Staged",
    "bayes_prior",
    "fitted",
    "honest",
    "narrow_null",
    "prior_only",
    "staged_view",
]
