"""What every audit report is: where and how its tasks were drawn, the per-check level,
the checks with their verdicts, and how the verdicts are sealed into the file.

A report is a published file, so it is a pydantic model that keeps the sufficient
statistics of every check: `AuditSuite.recheck` recomputes each verdict from the file
alone. Each suite's report (seed/report.py, estimand/report.py, expert/report.py)
extends this one with its own numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field

from causal_gym.audit.checks import CONSISTENCY_BUDGET, Check, KeyRun, Model, Paired, Slice

R = TypeVar("R", bound="SuiteReport")


class SuiteReport(Model):
    namespace: str
    per_family: int
    keys: tuple[KeyRun, ...]
    per_check_alpha: float
    checks: tuple[Check, ...]
    total_false_alarm: float
    #: The reward version the audit scored with (1: reports made before versions).
    reward_version: int = 1
    #: The generator version that made the audited tasks (None: reports made before
    #: audits recorded it).
    generator_version: int | None = None
    #: The bayes-prior probe minus honest, by family (audit/knowledge.py).
    bayes_prior: dict[str, Paired] = Field(default_factory=dict)
    #: Every public slice's numbers (audit/slices.py); empty in reports made before
    #: slices, and for a suite whose families are each audited on one tier.
    slices: dict[str, Slice] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def parts(self) -> dict[str, Any]:
        """The report's numbers without its verdicts, as a suite's `evaluate` takes
        them (the models themselves, not their JSON)."""
        skip = {"checks", "total_false_alarm"}
        return {name: getattr(self, name) for name in type(self).model_fields if name not in skip}


def seal(
    numbers: dict[str, Any],
    model: type[R],
    evaluate: Callable[[dict[str, Any]], list[Check]],
    consistency: int,
) -> R:
    """The finished report: the 1% budget's consistency share split evenly over the
    `consistency` checks that can fail by chance (Bonferroni), every check evaluated
    from the numbers alone, and the false-alarm rates summed."""
    numbers = {**numbers, "per_check_alpha": CONSISTENCY_BUDGET / consistency}
    checks = tuple(evaluate(numbers))
    total = float(sum(c.false_alarm for c in checks))
    return model.model_validate({**numbers, "checks": checks, "total_false_alarm": total})
