"""`obs_vs_rct`: a large observational extract and a small randomized trial from the
same population. In a keyed, disclosed half of the tasks the extract has a confounder
that no declared column blocks; the answer is the population ATE with a 90% interval
plus the probability that the extract's adjusted estimate is biased.

Effect classes come in keyed blocks of 10 (5 confounded, 5 not), so the disclosed
prior of 1/2 is exact on every whole block, as null_detect's 13/20 is.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from causal_gym.families.base import FamilySpec
from causal_gym.scoring.schemas import AteSubmission, FiniteFloat
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.derive import TaskStreams
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.scm.model import Scm
    from causal_gym.scm.sample import CleanSample
    from causal_gym.spec.plan import EffectClass, TaskPlan
    from causal_gym.task import HiddenTruth
    from causal_gym.task_id import TaskId

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


def trial_share(streams: TaskStreams) -> float:
    """The trial's share of the extract's rows: the `trial` stream's first draw
    (generate/trial.py makes it), read here from a copy of the stream."""
    return float(copy.deepcopy(streams.trial).uniform(*TRIAL_SHARE))


class ObsVsRctSubmission(AteSubmission):
    """ATE answer plus a probability that the extract's adjusted estimate is biased."""

    bias_probability: FiniteFloat = Field(
        ge=0.0,
        le=1.0,
        description="Probability in [0, 1] that data.csv has unblocked confounding, so that "
        "its estimate adjusted for the declared covariates is biased.",
    )


class ObsVsRctFamily(FamilySpec):
    name = Family.OBS_VS_RCT
    label = "Obs vs RCT"
    submission_model = ObsVsRctSubmission
    staged_files = ("data.csv", TRIAL_FILE, "README.md")
    components = ("brier_skill",)
    eval_count = 150
    eval_split = "eval-v2"
    reference_kit = ("analyst.py", "estimands.py")
    extra_probes = ("observational_only", "trial_only", "always_biased")
    confounding_classes = True
    rows_factor = 3.0  # the extract is the large file; the trial is a share of it

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        confounded = BIAS_BLOCK_COUNTS["confounded"]
        size = (
            "when one is, the bias is large compared with the sampling error of the two files' "
            "estimates."
            if not (declared or {}).get("bias_spread")
            else bias_spread_sentence()
        )
        return [
            "Also give `bias_probability`, your probability that data.csv has confounding "
            "the declared pre-treatment columns do not block (so that its adjusted estimate "
            f"is biased). Prior: exactly {confounded} of every {BIAS_BLOCK_SIZE} tasks of this "
            f"family are confounded that way (prior probability {confounded}/{BIAS_BLOCK_SIZE}); "
            f"{size} trial.csv is randomized and never confounded."
        ]

    def context_lines(self, declared: Mapping[str, str]) -> list[str]:
        return [
            f"trial.csv: {declared['trial_rows']} rows from a randomized trial in the same "
            "population, with the same columns and codes as data.csv. The treatment there was "
            "assigned by a fair coin, independently of everything else.",
            "data.csv is the large observational extract: who was treated there was not "
            "randomized. Both files describe the same population and the same effect.",
        ]

    def assumption_lines(self) -> list[str] | None:
        return [
            "trial.csv: treatment was randomized, so it is independent of the potential outcomes.",
            "data.csv: conditional ignorability given the pre-treatment columns may or may not "
            "hold (see the prior under Submission).",
            "Consistency: in both files a unit's observed outcome is its potential outcome "
            "under the treatment it actually received.",
            "Positivity: in data.csv every unit had a probability strictly between 0 and 1 of "
            "receiving the intervention, given its pre-treatment covariates.",
        ]

    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        from causal_gym.spec.plan import block_classes

        block, position = divmod(task_id.index, BIAS_BLOCK_SIZE)
        classes = block_classes(key, task_id.namespace, block, BIAS_BLOCK_COUNTS, self.name)
        return classes[position]

    def hidden_confounder(self, effect: EffectClass) -> bool:
        return effect.value == "confounded"

    def hidden_treatment_cause(self, effect: EffectClass, generator_version: int) -> bool:
        # Generator 2 gave only confounded extracts a latent parent of the treatment:
        # they needed more generation attempts (positivity) and their treatment was
        # less predictable from the declared columns (issue 24's leakage check).
        return generator_version >= 3 and not self.hidden_confounder(effect)

    def calibrate(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> Scm | None:
        if plan.generator_version < 3 or not self.hidden_confounder(plan.effect_class):
            return scm
        from causal_gym.generate.bias import calibrated_confounder

        # The effect stream's second draw (its first is the ATE's half-width).
        target = float(streams.effect.uniform(*BIAS_SPREAD))
        return calibrated_confounder(scm, sample, target, trial_share(streams))

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        from causal_gym.generate.bias import omitted_bias_in_ses
        from causal_gym.scm.certify import CONFOUNDING_REASON

        if not self.hidden_confounder(plan.effect_class):
            return []
        if plan.generator_version < 3:
            bias = omitted_bias_in_ses(scm, sample)
            low, high = MIN_BIAS_IN_SES, math.inf
        else:  # the calibration held: the drawn size, up to the clean sample's noise
            bias = omitted_bias_in_ses(scm, sample, trial_share(streams))
            low, high = BIAS_SPREAD[0] / 2, BIAS_SPREAD[1] * 1.25
        if not low <= bias <= high:
            return [CONFOUNDING_REASON]  # the same words as any other confounding failure
        return []

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        from causal_gym.scoring.reward import brier_skill

        if not isinstance(submission, ObsVsRctSubmission):
            raise TypeError("an obs_vs_rct task needs an ObsVsRctSubmission")
        biased = truth.effect_class.value == "confounded"
        return {"brier_skill": brier_skill(submission.bias_probability, biased, BIAS_PRIOR)}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        weight, skill_weight = OBS_VS_RCT_WEIGHTS
        return weight * estimand_reward + skill_weight * components["brier_skill"]

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        return {**super().placeholder_answer(estimands), "bias_probability": BIAS_PRIOR}


SPEC = ObsVsRctFamily()
