"""`obs_vs_rct`: a large observational extract and a small randomized trial from the
same population. In a keyed, disclosed half of the tasks the extract has a confounder
that no declared column blocks; the answer is the population ATE with a 90% interval
plus the probability that the extract's adjusted estimate is biased
(obs_vs_rct_hooks.py draws and words it).

Effect classes come in keyed blocks of 10 (5 confounded, 5 not), so the disclosed
prior of 1/2 is exact on every whole block, as null_detect's 13/20 is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.submissions import AteSubmission, FiniteFloat
from causal_gym.namespaces import Namespace

#: Weights of the estimand reward and of the Brier skill in the total.
OBS_VS_RCT_WEIGHTS = (0.9, 0.1)
BIAS_BLOCK_SIZE = 10
BIAS_BLOCK_COUNTS = {"confounded": 5, "unconfounded": 5}
#: Disclosed prior probability that the extract is confounded.
BIAS_PRIOR = BIAS_BLOCK_COUNTS["confounded"] / BIAS_BLOCK_SIZE
#: The trial has this share of the extract's rows (keyed within the range).
TRIAL_SHARE = (0.30, 0.50)
TRIAL_FILE = "trial.csv"
#: Generator 2: a confounded extract's bias (on the clean sample: adjusted OLS without
#: the hidden confounder minus with it) must be at least this many combined standard
#: errors of the two estimates, so that the comparison the README invites detects it.
#: That made detection free (the reference's Brier skill 0.93-0.98; issue 24).
MIN_BIAS_IN_SES = 4.0
#: Generator 3: the bias is drawn uniformly in this range of combined SEs (the
#: hidden confounder's weight on the outcome set to give it, its noise lowered so the
#: outcome's variance is what it would be without it), and the README says so.
BIAS_SPREAD = (0.5, 4.0)


def bias_spread_sentence() -> str:
    """Generator 3's disclosure of the bias's size (reference/estimands.py reads its
    numbers back)."""
    low, high = BIAS_SPREAD
    return (
        "when one is, the bias of data.csv's adjusted estimate was drawn uniformly between "
        f"{low:g} and {high:g} combined standard errors of the two files' adjusted estimates "
        "(the square root of the sum of their squared standard errors), with either sign, "
        "and the unobserved confounder leaves the outcome's variance as it would be without it."
    )


class ObsVsRctSubmission(AteSubmission):
    """ATE answer plus a probability that the extract's adjusted estimate is biased."""

    bias_probability: FiniteFloat = Field(
        ge=0.0,
        le=1.0,
        description="Probability in [0, 1] that data.csv has unblocked confounding, so that "
        "its estimate adjusted for the declared covariates is biased.",
    )


class ObsVsRctFamily(FamilyContract):
    name = "obs_vs_rct"
    label = "Obs vs RCT"
    submission_model = ObsVsRctSubmission
    staged_files = ("data.csv", TRIAL_FILE, "README.md")
    components = ("brier_skill",)
    splits: ClassVar[Mapping[Namespace, int]] = {Namespace.EVAL_V2: 150}
    reference_kit = ("analyst.py", "estimands.py", "answer.py")
    extra_probes = ("observational_only", "trial_only", "always_biased")
    block_size = BIAS_BLOCK_SIZE
    hooks = "causal_gym.families.obs_vs_rct.hooks:ObsVsRctHooks"

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "bias_probability": BIAS_PRIOR}


CONTRACT = ObsVsRctFamily()
