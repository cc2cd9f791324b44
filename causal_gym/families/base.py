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

from pydantic import BaseModel

from causal_gym.scoring.schemas import AteSubmission
from causal_gym.task_id import EXPERT_FAMILIES, Family

if TYPE_CHECKING:
    from causal_gym.rng_keys.derive import TaskStreams
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.scm.model import Scm
    from causal_gym.scm.sample import CleanSample
    from causal_gym.spec.plan import EffectClass, TaskPlan
    from causal_gym.task import HiddenTruth
    from causal_gym.task_id import TaskId

#: (estimate, ci_lower, ci_upper) of one estimand in a submission.
Triple = tuple[float, float, float]

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
    submission_model: ClassVar[type[BaseModel]]
    #: Named estimands, in the order the README and the score list them. A family
    #: whose names depend on the task (cate: one per modifier level) sets
    #: `per_level_estimands` and lists a placeholder here.
    estimands: ClassVar[tuple[str, ...]] = ("ate",)
    per_level_estimands: ClassVar[bool] = False
    staged_files: ClassVar[tuple[str, ...]] = DEFAULT_STAGED_FILES
    #: Named score components beyond the estimand reward (e.g. "validity").
    components: ClassVar[tuple[str, ...]] = ()
    #: Tasks of this family in its frozen split (eval-v1 or eval-v2; ids 0..count-1).
    eval_count: ClassVar[int]
    #: The frozen split the family belongs to.
    eval_split: ClassVar[str] = "eval-v1"
    #: Tasks of this family in eval-expert-v1 (0: the family has no expert tier; the
    #: families with one are task_id.EXPERT_FAMILIES).
    expert_eval_count: ClassVar[int] = 0
    #: Hack probes of reference/probes.py the audit runs on this family (beyond the
    #: shared ones), by name.
    extra_probes: ClassVar[tuple[str, ...]] = ()
    #: Lower bounds on the SCM's drawn role counts (applied after the draw, so they
    #: consume no randomness).
    min_role_counts: ClassVar[Mapping[str, int]] = {}
    #: Upper bounds, applied the same way.
    max_role_counts: ClassVar[Mapping[str, int]] = {}
    #: SCM requirements beyond role counts: a declared categorical effect modifier
    #: with this many levels (cate), a declared mediator (mediation).
    modifier_levels: ClassVar[tuple[int, int] | None] = None
    declared_mediator: ClassVar[bool] = False
    #: Staged rows are the tier's draw times this factor (per-level estimands need more).
    rows_factor: ClassVar[float] = 1.0
    #: The sandbox-kit files (causal_gym/reference/) its reference analysis runs from:
    #: analyst.py with flexible.py (the expert tier) and posterior.py (null_detect's
    #: posterior) for one ATE from data.csv; estimands.py beside analyst.py for several
    #: estimands or several files (then its probes are in estimand_probes.py).
    reference_kit: ClassVar[tuple[str, ...]] = ("analyst.py", "flexible.py", "posterior.py")
    #: Generator 3's README line on effect sizes (staging/readme.py): what the
    #: hyperprior draws, and what the family builds from that draw.
    effect_size_subject: ClassVar[str] = "the true ATE"
    effect_size_detail: ClassVar[str] = ""

    @property
    def multi_estimand(self) -> bool:
        return "estimands.py" in self.reference_kit

    def readme_lines(self, declared: Mapping[str, str] | None = None) -> list[str]:
        """The family's paragraph of the README's answer section, after the shared
        sentence about the 90% interval (`declared`: as for context_lines)."""
        return []

    def question(self, treatment: str, outcome: str, unit: str) -> str | None:
        """The README's question, when it is not the shared ATE question."""
        return None

    def context_lines(self, declared: Mapping[str, str]) -> list[str]:
        """README lines after the question that declare what the family adds (the
        modifier, the mediator, the trial file). `declared` holds public names:
        "modifier", "mediator", "trial_rows" when the task has them."""
        return []

    def assumption_lines(self) -> list[str] | None:
        """The README's identification contract, when it is not the shared
        backdoor contract (None keeps the shared one)."""
        return None

    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        """The effect class a task id commits to before its SCM is drawn."""
        from causal_gym.spec.plan import EffectClass

        return EffectClass.STANDARD

    #: Whether the family's effect classes decide the SCM's confounding (obs_vs_rct):
    #: the certificate then checks the class's promise, under one neutral reason.
    confounding_classes: ClassVar[bool] = False

    def hidden_confounder(self, effect: EffectClass) -> bool:
        """Whether the SCM gets a confounder no declared column blocks (obs_vs_rct)."""
        return False

    def hidden_treatment_cause(self, effect: EffectClass, generator_version: int) -> bool:
        """Whether an SCM without a hidden confounder still gets an unobserved cause of
        the treatment alone, drawn the same way (obs_vs_rct under generator 3)."""
        return False

    def estimand_values(self, scm: Scm, levels: tuple[str, ...]) -> dict[str, float]:
        """The exact truth of each estimand; `levels` names the modifier's levels in
        code order (cate only)."""
        return {"ate": scm.total_effect()}

    def calibrate(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> Scm | None:
        """An SCM to sample again in place of `scm`, with the same data stream, from
        what its first sample shows (obs_vs_rct under generator 3 sets its hidden
        confounder's strength); None rejects the candidate; `scm` itself (the default)
        keeps the sample."""
        return scm

    def certify_sample(
        self, scm: Scm, sample: CleanSample, plan: TaskPlan, streams: TaskStreams
    ) -> list[str]:
        """Family-specific certificate reasons on the hidden SCM and clean sample."""
        return []

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        """Each estimand's (estimate, lower, upper) in a validated submission."""
        if not isinstance(submission, AteSubmission):
            raise TypeError(f"a {self.name} task needs an AteSubmission")
        return {"ate": (submission.estimate, submission.ci_lower, submission.ci_upper)}

    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        """Each of `components`, scored against the hidden truth."""
        return {}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        """The reward training optimizes, from the estimand reward and the components."""
        return estimand_reward

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        """A valid answer that uses no data (scripted agents and load tests submit it)."""
        return {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}

    def check(self) -> None:
        """Raise FamilyContractError when the declarations contradict each other."""
        if not self.estimands or len(set(self.estimands)) != len(self.estimands):
            raise FamilyContractError(f"{self.name}: estimands must be distinct and non-empty")
        if not set(DEFAULT_STAGED_FILES) <= set(self.staged_files):
            raise FamilyContractError(f"{self.name}: data.csv and README.md must be staged")
        if self.eval_count < 1:
            raise FamilyContractError(f"{self.name}: eval_count must be positive")
        if self.eval_split not in ("eval-v1", "eval-v2"):
            raise FamilyContractError(f"{self.name}: unknown eval split {self.eval_split}")
        if (self.expert_eval_count > 0) != (self.name.value in EXPERT_FAMILIES):
            raise FamilyContractError(f"{self.name}: expert_eval_count vs EXPERT_FAMILIES")
        if self.per_level_estimands and self.modifier_levels is None:
            raise FamilyContractError(f"{self.name}: per-level estimands need a modifier")
        answer = self.submission_model.model_validate(self.placeholder_answer())
        if not self.per_level_estimands and tuple(self.intervals(answer)) != self.estimands:
            raise FamilyContractError(f"{self.name}: intervals() must name {self.estimands}")
