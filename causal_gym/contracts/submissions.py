"""The answer models the families share: a finite number, one estimand's interval, and
the ATE answer the seed families extend.

These models are the contract printed in every README (via their JSON Schema), the
shape of the `submit_answer` tool and the gate in front of the scorer: anything that
does not validate is answered with errors and never scored. Their class names,
docstrings and field descriptions are part of the frozen splits' staged bytes (the
schema carries them): change them only with a new generator version.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

INTERVAL_LEVEL = 0.90
#: Submitted numbers must lie within +-MAX_ABS_VALUE, so every loss and reward stays a
#: finite float (an interval from -1e308 to 1e308 has an infinite width). It is far
#: beyond any outcome scale a task has. (A validator, not a schema bound, so the JSON
#: Schema in the staged README of the frozen split is unchanged.)
MAX_ABS_VALUE = 1e12


def _within_range(value: float) -> float:
    if abs(value) > MAX_ABS_VALUE:
        raise ValueError(f"must be within [-1e12, 1e12], got {value!r}")
    return value


FiniteFloat = Annotated[float, Field(allow_inf_nan=False), AfterValidator(_within_range)]


def ordered(model: Any) -> Any:
    """The model itself when its interval's ends are in order (a validator's body)."""
    if model.ci_lower > model.ci_upper:
        raise ValueError(f"ci_lower ({model.ci_lower!r}) must be <= ci_upper ({model.ci_upper!r})")
    return model


STRICT = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class AteSubmission(BaseModel):
    """Point estimate of the population ATE with a 90% interval."""

    model_config = STRICT

    estimate: FiniteFloat = Field(
        description="Point estimate of the population average treatment effect."
    )
    ci_lower: FiniteFloat = Field(description="Lower end of the 90% interval for the ATE.")
    ci_upper: FiniteFloat = Field(description="Upper end of the 90% interval; must be >= ci_lower.")

    @model_validator(mode="after")
    def _bounds_ordered(self) -> AteSubmission:
        return ordered(self)


class Interval(BaseModel):
    """One estimand's point estimate with its 90% interval (the multi-estimand
    families answer several of these)."""

    model_config = STRICT

    estimate: FiniteFloat = Field(description="Point estimate.")
    ci_lower: FiniteFloat = Field(description="Lower end of the 90% interval.")
    ci_upper: FiniteFloat = Field(description="Upper end of the 90% interval; must be >= ci_lower.")

    @model_validator(mode="after")
    def _bounds_ordered(self) -> Interval:
        return ordered(self)

    def triple(self) -> tuple[float, float, float]:
        """The answer as (estimate, lower, upper), the shape a contract's intervals() returns."""
        return self.estimate, self.ci_lower, self.ci_upper
