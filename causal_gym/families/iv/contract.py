"""`iv`: an unobserved confounder moves treatment and outcome; an instrument (a
lottery, an encouragement letter, distance to a facility) moves treatment alone. Where
effects vary the task asks for the complier effect (LATE), where they are constant
for the ATE; the README's Design section names which."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from causal_gym.contracts.designs import DesignContract, DesignSubmission
from causal_gym.namespaces import Namespace


class IvSubmission(DesignSubmission):
    """The named estimand of an instrumental-variables task with a 90% interval."""

    estimand: Literal["late", "ate"] = Field(
        description="The estimand README.md's Design section names: 'late' (the average "
        "effect among compliers) or 'ate' (the average effect, constant across units)."
    )


class IvFamily(DesignContract):
    name = "iv"
    label = "IV"
    submission_model = IvSubmission
    estimands = ("late", "ate")
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V3: 150}
    reference_kit = DesignContract.design_kit("design_iv.py")
    extra_probes = ("ols", "reduced_form", "wald_2sls", "anderson_rubin")
    hooks = "causal_gym.families.iv.hooks:IvHooks"


CONTRACT = IvFamily()
