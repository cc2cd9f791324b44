"""`mediation`: the natural direct and indirect effects of the treatment through one
declared mediator, and the total effect, which must be their sum.

The hidden SCM is linear with no treatment-mediator interaction, so the natural
indirect effect is exactly the product of the treatment->mediator and
mediator->outcome weights and the natural direct effect is the rest of the total.
The mediator's other causes are declared pre-treatment columns, which is what the
README's sequential-ignorability contract promises (mediation_hooks.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.contracts.contract import FamilyContract, Triple
from causal_gym.contracts.submissions import Interval
from causal_gym.namespaces import Namespace

#: The declared mediator's node id in the hidden SCM (generate/build.py draws it).
MEDIATOR_ID = "k1"
#: The first generator version whose indirect effect is drawn uniformly between -B
#: and B, B log-uniform on INDIRECT_HALF_WIDTH (hooks.py says why); before it the
#: mediator's weight on the outcome was uniform between 0.3 and 0.8 in size.
SMOOTH_INDIRECT_VERSION = 6
INDIRECT_HALF_WIDTH = (0.2, 0.8)

#: `total.estimate` may differ from direct + indirect by this share of their size
#: (floating-point rounding of a sum written out in decimal).
SUM_TOLERANCE = 1e-6


class MediationSubmission(BaseModel):
    """The natural direct, natural indirect and total effects, each with an interval."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    direct: Interval = Field(description="Natural direct effect (not through the mediator).")
    indirect: Interval = Field(description="Natural indirect effect (through the mediator).")
    total: Interval = Field(
        description="Total effect; its estimate must equal direct + indirect estimates."
    )

    @model_validator(mode="after")
    def _total_is_the_sum(self) -> MediationSubmission:
        parts = self.direct.estimate + self.indirect.estimate
        allowed = SUM_TOLERANCE * max(1.0, abs(parts), abs(self.total.estimate))
        if not math.isclose(self.total.estimate, parts, rel_tol=0.0, abs_tol=allowed):
            raise ValueError(
                f"total.estimate ({self.total.estimate!r}) must equal direct.estimate + "
                f"indirect.estimate ({parts!r})"
            )
        return self


class MediationFamily(FamilyContract):
    name = "mediation"
    label = "Mediation"
    submission_model = MediationSubmission
    estimands = ("direct", "indirect", "total")
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V2: 150}
    reference_kit = ("analyst.py", "estimands.py", "answer.py")
    extra_probes = ("total_as_direct", "mediator_as_confounder")
    hooks = "causal_gym.families.mediation.hooks:MediationHooks"

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        if not isinstance(submission, MediationSubmission):
            raise TypeError("a mediation task needs a MediationSubmission")
        return {name: getattr(submission, name).triple() for name in self.estimands}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        interval = {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}
        return {name: interval for name in self.estimands}


CONTRACT = MediationFamily()
