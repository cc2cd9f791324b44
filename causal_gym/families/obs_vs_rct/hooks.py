"""How `obs_vs_rct` tasks are drawn and worded: effect classes in keyed blocks of 10,
a hidden confounder in the confounded ones calibrated to a drawn bias (generator 3),
an unobserved cause of treatment in every extract, and the trial file."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from causal_gym.families.obs_vs_rct.bias import calibrated_confounder, omitted_bias_in_ses
from causal_gym.families.obs_vs_rct.contract import (
    BIAS_BLOCK_COUNTS,
    BIAS_BLOCK_SIZE,
    BIAS_PRIOR,
    BIAS_SPREAD,
    MIN_BIAS_IN_SES,
    OBS_VS_RCT_WEIGHTS,
    TRIAL_SHARE,
    ObsVsRctSubmission,
    bias_spread_sentence,
)
from causal_gym.families.obs_vs_rct.trial import trial_csv
from causal_gym.generate.fresh_rows import Spread
from causal_gym.hooks import FamilyHooks, StagedExtra
from causal_gym.plan.task_plan import EffectClass, TaskPlan, block_classes
from causal_gym.rng_keys.derive import TaskStreams
from causal_gym.rng_keys.keys import DerivationKey
from causal_gym.scm.certify import CONFOUNDING_REASON
from causal_gym.scm.marginals import Marginal
from causal_gym.scm.model import Scm
from causal_gym.scm.sample import CleanSample
from causal_gym.scoring.reward import brier_skill
from causal_gym.staging.mess import MessPlan
from causal_gym.staging.naming import Naming
from causal_gym.task import HiddenTruth
from causal_gym.task_id import TaskId


def trial_share(streams: TaskStreams) -> float:
    """The trial's share of the extract's rows: the `trial` stream's first draw
    (families/obs_vs_rct/trial.py makes it), read here from a copy of the stream."""
    return float(copy.deepcopy(streams.trial).uniform(*TRIAL_SHARE))


class ObsVsRctHooks(FamilyHooks):
    confounding_classes: ClassVar[bool] = True
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
        block, position = divmod(task_id.index, BIAS_BLOCK_SIZE)
        classes = block_classes(
            key, task_id.namespace, block, BIAS_BLOCK_COUNTS, self.contract.name
        )
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
        # The effect stream's second draw (its first is the ATE's half-width).
        target = float(streams.effect.uniform(*BIAS_SPREAD))
        return calibrated_confounder(scm, sample, target, trial_share(streams))

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
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

    def stage_extra(
        self,
        scm: Scm,
        naming: Naming,
        mess_plan: MessPlan,
        plan: TaskPlan,
        streams: TaskStreams,
    ) -> StagedExtra | None:
        trial = trial_csv(scm, naming, mess_plan, plan, streams.trial)
        if trial is None:
            return None
        data, coding, rows = trial
        declared = {"trial_rows": str(rows)}
        if plan.generator_version >= 3:  # the bias's size, drawn and disclosed
            declared["bias_spread"] = "disclosed"
        return StagedExtra({"trial.csv": data}, coding, declared)

    def anchor_spreads(
        self,
        scm: Scm,
        naming: Naming,
        rows: Mapping[str, int],
        replicates: int,
        rng: np.random.Generator,
    ) -> dict[str, Spread] | None:
        from causal_gym.families.obs_vs_rct.anchor import fresh_spreads

        return fresh_spreads(scm, naming, rows, replicates, rng)

    def task_anchors(
        self,
        scm: Scm,
        marginals: Mapping[str, Marginal],
        rng: np.random.Generator,
        rows: Mapping[str, int],
        levels: tuple[str, ...],
    ) -> dict[str, float] | None:
        """The ATE's r: the pool of the two files' efficient estimators (anchor.py)."""
        from causal_gym.families.obs_vs_rct.anchor import file_variances, pooled_anchor

        variances = file_variances(scm, marginals, rng)
        return {"ate": pooled_anchor(scm, variances, rows["data.csv"], rows["trial.csv"], rng)}

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        if not isinstance(submission, ObsVsRctSubmission):
            raise TypeError("an obs_vs_rct task needs an ObsVsRctSubmission")
        biased = truth.effect_class.value == "confounded"
        return {"brier_skill": brier_skill(submission.bias_probability, biased, BIAS_PRIOR)}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        weight, skill_weight = OBS_VS_RCT_WEIGHTS
        return weight * estimand_reward + skill_weight * components["brier_skill"]
