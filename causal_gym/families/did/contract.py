"""`did`: a panel of units over periods in which cohorts adopt a treatment at
different times (sometimes all at once), parallel trends true by construction; the
task asks for the average effect on treated unit-periods (ATT). On staggered adoption
with effects that change with time since adoption, two-way fixed effects is biased."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from causal_gym.contracts.designs import DesignContract, DesignSubmission
from causal_gym.namespaces import Namespace


class DidSubmission(DesignSubmission):
    """The named estimand of a difference-in-differences task with a 90% interval."""

    estimand: Literal["att"] = Field(
        description="The estimand README.md's Design section names: 'att' (the average "
        "effect over treated unit-periods)."
    )


class DidFamily(DesignContract):
    name = "did"
    label = "DiD"
    submission_model = DidSubmission
    estimands = ("att",)
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V3: 150}
    reference_kit = DesignContract.design_kit("design_did_fe.py", "design_did.py")
    extra_probes = ("twfe", "post_minus_pre")
    hooks = "causal_gym.families.did.hooks:DidHooks"


CONTRACT = DidFamily()
