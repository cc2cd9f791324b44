"""What a task family is: one object declaring everything that differs by family.

Every stage that used to branch on the family name (submission schema, validation,
README wording, SCM requirements, effect classes, reward, eval counts, hack probes)
asks the family's spec instead, so a new family is one new module plus a line in
`registry.py`, and the contract test (`tests/test_families.py`) checks it whole.

The spec is imported on the worker side too (the submission model is the episode's
`submit_answer` tool), so this module and the family modules import only light
modules at the top; anything that needs the generator, the SCM or networkx is
imported inside the method that needs it.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from causal_gym.scoring.schemas import AteSubmission
from causal_gym.task_id import Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.spec.plan import EffectClass
    from causal_gym.task import HiddenTruth
    from causal_gym.task_id import TaskId

#: The files every family stages today; a family may declare more (a second dataset).
DEFAULT_STAGED_FILES: tuple[str, ...] = ("data.csv", "README.md")


class FamilyContractError(Exception):
    """Raised at import time when a family module declares an inconsistent spec."""


class FamilySpec(ABC):
    """A family's declarations. Subclasses set the class attributes and override the
    hooks whose default does not fit; instances are stateless singletons."""

    name: ClassVar[Family]
    #: Column heading in reports and baseline tables.
    label: ClassVar[str]
    submission_model: ClassVar[type[AteSubmission]]
    #: Named estimands, in the order the README and the score list them.
    estimands: ClassVar[tuple[str, ...]] = ("ate",)
    staged_files: ClassVar[tuple[str, ...]] = DEFAULT_STAGED_FILES
    #: Named score components beyond the estimand reward (e.g. "validity").
    components: ClassVar[tuple[str, ...]] = ()
    #: Tasks of this family in the frozen eval-v1 split (ids 0..count-1).
    eval_v1_count: ClassVar[int]
    #: Hack probes of reference/probes.py the audit runs on this family (beyond the
    #: shared ones), by name.
    extra_probes: ClassVar[tuple[str, ...]] = ()
    #: Lower bounds on the SCM's drawn role counts (applied after the draw, so they
    #: consume no randomness).
    min_role_counts: ClassVar[Mapping[str, int]] = {}

    def readme_lines(self) -> list[str]:
        """The family's paragraph of the README's answer section, after the shared
        sentence about the 90% interval."""
        return []

    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        """The effect class a task id commits to before its SCM is drawn."""
        from causal_gym.spec.plan import EffectClass

        return EffectClass.STANDARD

    def score_components(self, truth: HiddenTruth, submission: AteSubmission) -> dict[str, float]:
        """Each of `components`, scored against the hidden truth."""
        return {}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        """The reward training optimizes, from the estimand reward and the components."""
        return estimand_reward

    def placeholder_answer(self) -> dict[str, Any]:
        """A valid answer that uses no data (scripted agents and load tests submit it)."""
        return {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}

    def check(self) -> None:
        """Raise FamilyContractError when the declarations contradict each other."""
        if not self.estimands or len(set(self.estimands)) != len(self.estimands):
            raise FamilyContractError(f"{self.name}: estimands must be distinct and non-empty")
        if not set(DEFAULT_STAGED_FILES) <= set(self.staged_files):
            raise FamilyContractError(f"{self.name}: data.csv and README.md must be staged")
        if self.eval_v1_count < 1:
            raise FamilyContractError(f"{self.name}: eval_v1_count must be positive")
        self.submission_model.model_validate(self.placeholder_answer())
