"""The contract of a design family (iv, did, rdd): one estimand per task, named by it.

A design family can ask for more than one estimand (iv: the complier effect where
effects vary, the ATE where they are constant), but each task asks for exactly one,
which its README's Design section names. The answer says which one it estimates, so
an analyst who answers the wrong question is told so in one line (scoring/validate.py)
rather than scored against a truth it did not estimate.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from causal_gym.contracts.contract import FamilyContract, Triple
from causal_gym.contracts.submissions import STRICT, FiniteFloat, ordered
from causal_gym.errors import FamilyContractError

#: The sandbox kit every design family's reference runs from; a family appends its
#: own module before answer.py (DesignContract.design_kit).
DESIGN_KIT: tuple[str, ...] = ("analyst.py", "designs.py")


class DesignSubmission(BaseModel):
    """The estimand the task names, its point estimate and a 90% interval. A family
    narrows `estimand` to its own names (a Literal)."""

    model_config = STRICT

    estimand: str = Field(description="The estimand named in README.md's Design section.")
    estimate: FiniteFloat = Field(description="Point estimate of the named estimand.")
    ci_lower: FiniteFloat = Field(description="Lower end of the 90% interval.")
    ci_upper: FiniteFloat = Field(description="Upper end of the 90% interval; must be >= ci_lower.")

    @model_validator(mode="after")
    def _bounds_ordered(self) -> DesignSubmission:
        return ordered(self)

    def triple(self) -> Triple:
        """The answer as (estimate, lower, upper)."""
        return self.estimate, self.ci_lower, self.ci_upper


class DesignContract(FamilyContract):
    """A family whose tasks each name one of its `estimands` (task_named_estimand)."""

    task_named_estimand: ClassVar[bool] = True

    @classmethod
    def design_kit(cls, *modules: str) -> tuple[str, ...]:
        """The reference kit: the shared design reader, the family's modules, answer.py."""
        return (*DESIGN_KIT, *modules, "answer.py")

    def probe_run(self, probe: str) -> tuple[tuple[str, ...], str]:
        """A design family's probes live in its kit module; designs.py runs them."""
        return self.reference_kit, f"python designs.py /workspace --probe {probe.replace('-', '_')}"

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        """The one estimand the answer names, with its interval."""
        if not isinstance(submission, DesignSubmission):
            raise TypeError(f"a {self.name} task needs a DesignSubmission")
        return {submission.estimand: submission.triple()}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        """A valid answer that uses no data, naming the task's estimand (or the first)."""
        named = estimands[0] if estimands else self.estimands[0]
        return {"estimand": named, "estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}

    def check(self) -> None:
        """The shared checks, then: the submission model names every estimand."""
        super().check()
        if not issubclass(self.submission_model, DesignSubmission):
            raise FamilyContractError(f"{self.name}: a design family answers a DesignSubmission")
        for name in self.estimands:
            answer = self.submission_model.model_validate(self.placeholder_answer((name,)))
            if tuple(self.intervals(answer)) != (name,):
                raise FamilyContractError(f"{self.name}: intervals() must name {name!r}")
        if self.reference_kit[-1] != "answer.py" or "designs.py" not in self.reference_kit:
            raise FamilyContractError(f"{self.name}: its kit is design_kit(...)")
