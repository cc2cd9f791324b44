"""`rdd`: a running variable (a test score, an age, a date) with a cutoff; sharp in
some tasks and fuzzy in others. The task asks for the effect at the cutoff (for a
fuzzy design, among compliers at the cutoff), exact from the model's conditional
means at the threshold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from causal_gym.contracts.designs import DesignContract, DesignSubmission
from causal_gym.namespaces import Namespace


class RddSubmission(DesignSubmission):
    """The named estimand of a regression-discontinuity task with a 90% interval."""

    estimand: Literal["effect_at_cutoff", "complier_effect_at_cutoff"] = Field(
        description="The estimand README.md's Design section names: 'effect_at_cutoff' "
        "(sharp designs) or 'complier_effect_at_cutoff' (fuzzy designs)."
    )


class RddFamily(DesignContract):
    name = "rdd"
    label = "RDD"
    submission_model = RddSubmission
    estimands = ("effect_at_cutoff", "complier_effect_at_cutoff")
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V3: 150}
    reference_kit = DesignContract.design_kit("design_rdd_local.py", "design_rdd.py")
    extra_probes = (
        "robust_bias_corrected",
        "global_polynomial",
        "narrow_bandwidth",
        "wide_bandwidth",
    )
    hooks = "causal_gym.families.rdd.hooks:RddHooks"


CONTRACT = RddFamily()
