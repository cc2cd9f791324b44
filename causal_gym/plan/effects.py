"""How big a task's true effect is: the effect-size prior of each generator version.

Why it changed (generator version 3): under version 2 every non-null effect had
|ATE| uniform on [0.10, 1.50], and an agent that knew it could clip its estimate at
the edges and gain about 0.005 a task (issue 24's measurement) without any causal
analysis. Version 3 draws the effect uniform on [-A, A], with a half-width A of its own
drawn log-uniform on [HALF_WIDTH_LOW, HALF_WIDTH_HIGH] from the keyed `effect` stream.
The resulting prior is flat across zero and, above |ATE| = 1, falls off smoothly to
zero at 3: it has no edge within reach of a task's standard error (0.03-0.2), so the
posterior under it barely moves an honest estimate. The audits' bayes-prior probe measures what
is left.

Version 3 reuses version 2's two draws from the `scm` stream (a uniform position and
a sign), so every other part of a train task's SCM is what version 2 drew: the two
versions differ in the effect size alone. null_detect's classes (a point mass at
zero, hard and wide non-nulls) are the family's subject and stay; its honest
reference is the posterior under them (reference/posterior.py). The frozen splits
keep the generator version they were frozen with (causal_gym/versions.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from causal_gym.plan.task_plan import EFFECT_MAGNITUDE, EffectClass

#: Version 3's half-width range (outcome units), log-uniform. Chosen by simulating the
#: posterior gain against the honest interval at the tasks' standard errors
#: (0.03-0.2): about 0.0026 a task for [0.5, 3], 0.0009 for [1, 3] (where the prior is
#: flat up to |ATE| = 1, which holds 63% of the tasks); version 2's uniform |ATE| on
#: [0.10, 1.50] gave 0.010 in the same simulation.
HALF_WIDTH_LOW = 1.0
HALF_WIDTH_HIGH = 3.0
#: The classes whose size version 3 draws from the hyperprior (the others keep theirs).
HYPERPRIOR_CLASSES = frozenset(
    {EffectClass.STANDARD, EffectClass.CONFOUNDED, EffectClass.UNCONFOUNDED}
)


@dataclass(frozen=True)
class EffectPrior:
    """What a plan promises about its effect: the draw and the certificate's check."""

    effect: EffectClass
    hyperprior: bool
    #: The generator version the plan was made under (some families change shape
    #: with it, e.g. obs_vs_rct's latent cause of treatment from version 3 on).
    generator_version: int

    def draw(self, rng: np.random.Generator, effect_rng: np.random.Generator) -> float:
        """The signed ATE; `rng` is the SCM's stream (two draws, whichever version),
        `effect_rng` the keyed `effect` stream (version 3's half-width)."""
        if self.effect is EffectClass.STRUCTURAL_NULL:
            return 0.0
        low, high = EFFECT_MAGNITUDE[self.effect]
        position = float(rng.uniform(low, high))
        sign = float(rng.choice((-1.0, 1.0)))
        if not self.hyperprior:
            return position * sign
        half_width = math.exp(
            float(effect_rng.uniform(math.log(HALF_WIDTH_LOW), math.log(HALF_WIDTH_HIGH)))
        )
        return sign * half_width * (position - low) / (high - low)

    def admits(self, ate: float) -> bool:
        """Whether `ate` is one this prior can draw (the certificate's effect check)."""
        if self.effect is EffectClass.STRUCTURAL_NULL:
            return ate == 0.0
        if self.hyperprior:
            return 0.0 < abs(ate) <= HALF_WIDTH_HIGH
        low, high = EFFECT_MAGNITUDE[self.effect]
        return low <= abs(ate) <= high


def effect_prior(effect: EffectClass, generator_version: int) -> EffectPrior:
    return EffectPrior(
        effect, generator_version >= 3 and effect in HYPERPRIOR_CLASSES, generator_version
    )
