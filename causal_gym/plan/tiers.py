"""Difficulty tiers: how big, how tangled and how messy a task may be.

Tiers are ranges, not fixed shapes: each task draws its own counts inside its tier,
and adjacent row-count ranges overlap so the size of data.csv hints at the tier
without giving it away.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

IntRange = tuple[int, int]
FloatRange = tuple[float, float]


class Tier(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    EXPERT = "expert"
    REAL = "real"


#: The tiers a train task draws from uniformly; the expert and real tiers are drawn
#: apart (see plan/task_plan.py), so adding them moved no other task.
TIER_ORDER: tuple[Tier, ...] = (Tier.EASY, Tier.MEDIUM, Tier.HARD)


@dataclass(frozen=True)
class TierSpec:
    """Inclusive ranges each task of the tier draws from (counts are per SCM role)."""

    tier: Tier
    staged_rows: IntRange
    confounders: IntRange
    blockers: IntRange
    instruments: IntRange
    predictors: IntRange
    irrelevant: IntRange
    decoys: IntRange
    binary: IntRange
    categorical: IntRange
    mediators: IntRange
    descendants: IntRange
    outcome_noise_sd: FloatRange
    propensity_strength: float
    duplicate_fraction: FloatRange
    outlier_fraction: FloatRange
    missing_row_fraction: FloatRange
    alternative_coding_fraction: FloatRange

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, tuple) and not value[0] <= value[1]:
                raise ValueError(f"tier {self.tier}: range {name}={value} is empty")
        if self.staged_rows[0] < 250:
            raise ValueError(f"tier {self.tier}: fewer than 250 base rows cannot be certified")


TIER_SPECS: dict[Tier, TierSpec] = {
    Tier.EASY: TierSpec(
        tier=Tier.EASY,
        staged_rows=(1500, 4000),
        confounders=(2, 3),
        blockers=(0, 1),
        instruments=(0, 1),
        predictors=(1, 3),
        irrelevant=(1, 2),
        decoys=(0, 1),
        binary=(0, 1),
        categorical=(0, 1),
        mediators=(0, 1),
        descendants=(1, 2),
        outcome_noise_sd=(0.8, 1.1),
        propensity_strength=1.0,
        duplicate_fraction=(0.005, 0.015),
        outlier_fraction=(0.001, 0.003),
        missing_row_fraction=(0.01, 0.04),
        alternative_coding_fraction=(0.0, 0.10),
    ),
    Tier.MEDIUM: TierSpec(
        tier=Tier.MEDIUM,
        staged_rows=(800, 2000),
        confounders=(3, 4),
        blockers=(1, 1),
        instruments=(0, 2),
        predictors=(1, 3),
        irrelevant=(1, 3),
        decoys=(1, 1),
        binary=(1, 2),
        categorical=(0, 1),
        mediators=(0, 2),
        descendants=(1, 3),
        outcome_noise_sd=(0.9, 1.2),
        propensity_strength=1.25,
        duplicate_fraction=(0.01, 0.025),
        outlier_fraction=(0.002, 0.004),
        missing_row_fraction=(0.03, 0.07),
        alternative_coding_fraction=(0.05, 0.20),
    ),
    Tier.HARD: TierSpec(
        tier=Tier.HARD,
        staged_rows=(400, 1000),
        confounders=(4, 5),
        blockers=(1, 2),
        instruments=(1, 2),
        predictors=(2, 4),
        irrelevant=(2, 4),
        decoys=(1, 2),
        binary=(1, 3),
        categorical=(1, 2),
        mediators=(1, 2),
        descendants=(2, 3),
        outcome_noise_sd=(1.0, 1.3),
        propensity_strength=1.5,
        duplicate_fraction=(0.015, 0.035),
        outlier_fraction=(0.003, 0.006),
        missing_row_fraction=(0.05, 0.10),
        alternative_coding_fraction=(0.10, 0.30),
    ),
    # Nonlinear outcome and propensity (scm/nonlinear.py), a flexible reference: more
    # rows than hard, because cross-fitted nuisance models need them; medium's tangle
    # and mess otherwise.
    Tier.EXPERT: TierSpec(
        tier=Tier.EXPERT,
        staged_rows=(2000, 4000),
        confounders=(3, 5),
        blockers=(0, 1),
        instruments=(0, 1),
        predictors=(1, 3),
        irrelevant=(1, 3),
        decoys=(0, 1),
        binary=(0, 1),
        categorical=(0, 1),
        mediators=(0, 1),
        descendants=(1, 3),
        outcome_noise_sd=(0.9, 1.2),
        propensity_strength=1.0,
        duplicate_fraction=(0.01, 0.025),
        outlier_fraction=(0.002, 0.004),
        missing_row_fraction=(0.03, 0.07),
        alternative_coding_fraction=(0.05, 0.20),
    ),
    # Real covariates (causal_gym/realdata/): the roots are a real table's columns, so
    # the table decides how many are binary or categorical and caps the root count;
    # the rows are a share of the table's (plan/task_plan.py), not this range, which
    # only bounds them. Medium's tangle and mess otherwise, with less outcome noise:
    # the tables are small (753-3,010 rows), and at the linear tiers' noise the
    # honest reward on 450-680 rows of Mroz's fell below the audit's band (0.70).
    Tier.REAL: TierSpec(
        tier=Tier.REAL,
        staged_rows=(450, 2710),  # 60% of Mroz's 753 rows to 90% of Card's 3,010
        confounders=(2, 3),
        blockers=(0, 1),
        instruments=(0, 1),
        predictors=(1, 2),
        irrelevant=(1, 2),
        decoys=(0, 1),
        binary=(0, 0),
        categorical=(0, 0),
        mediators=(0, 1),
        descendants=(1, 2),
        outcome_noise_sd=(0.7, 1.0),
        propensity_strength=1.0,
        duplicate_fraction=(0.01, 0.025),
        outlier_fraction=(0.002, 0.004),
        missing_row_fraction=(0.03, 0.07),
        alternative_coding_fraction=(0.05, 0.20),
    ),
}

#: The disclosed share of train tasks of the expert families (task_id.EXPERT_FAMILIES)
#: that are expert tasks, among those that are not real (from generator version 4 a
#: real draw wins: REAL_TRAIN_SHARE below); eval-expert-v1 holds only expert tasks,
#: the other splits none.
EXPERT_TRAIN_SHARE = 0.2

#: The disclosed share of train tasks of the real families (those with a count in
#: eval-real-v1) that are real tasks, from generator version 4 on; eval-real-v1 holds
#: only real tasks, the other splits none.
REAL_TRAIN_SHARE = 0.2
#: A real task stages this share of its table's usable rows (a subsample: each row
#: at most once), whatever its namespace.
REAL_ROW_SHARE: FloatRange = (0.6, 0.9)
#: The share of a real task's draws that are nonlinear, on a table that supports it
#: (the expert tier's terms on its continuous columns, and its flexible reference).
REAL_NONLINEAR_SHARE = 0.5

#: A train task's row count is its base count times a factor in this range.
TRAIN_JITTER: FloatRange = (0.5, 1.5)
