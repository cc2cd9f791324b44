"""How a family's tasks are drawn, worded and scored: the hooks base and its loader.

Every stage that used to branch on the family name (README wording, SCM requirements,
effect classes, the certificate, the truths of its estimands, a second staged file,
the score components and the total) asks the family's hooks instead. They run only
where tasks are made or scored (never on the worker side), and are loaded from the
entry point the family's contract names (contracts/families.py), so importing a
contract never loads them.

Where it stands: above the types its methods pass around (the plan, the SCM, its
sample, the hidden truth) and below everything that generates or scores (generate/,
staging/, scoring/), which call it; a family's own hooks (families/<name>/hooks.py)
subclass it from above all of them. The contracts beneath stay free of numeric code.

The defaults describe a one-ATE family; a family overrides what differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from causal_gym.contracts.contract import FamilyContract
from causal_gym.contracts.families import contract_of
from causal_gym.errors import FamilyContractError
from causal_gym.registries import load_entry_point

if TYPE_CHECKING:
    import numpy as np

    from causal_gym.designs.candidate import DesignCandidate, DesignRejection
    from causal_gym.plan.task_plan import EffectClass, TaskPlan
    from causal_gym.rng_keys.derive import TaskStreams
    from causal_gym.rng_keys.keys import DerivationKey
    from causal_gym.scm.marginals import Marginal
    from causal_gym.scm.model import Scm
    from causal_gym.scm.sample import CleanSample
    from causal_gym.staging.mess import MessPlan, TreatmentCoding
    from causal_gym.staging.naming import Naming
    from causal_gym.task import HiddenTruth
    from causal_gym.task_id import TaskId


@dataclass(frozen=True)
class StagedExtra:
    """Files a family stages beside data.csv and README.md: their bytes, the treatment
    codes they use (listed in the README with the extract's), and the public facts the
    README declares about them (`context_lines` reads them)."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    coding: TreatmentCoding | None = None
    declared: Mapping[str, str] = field(default_factory=dict)


class FamilyHooks:
    """A family's generation, README and scoring hooks (`contract` is its contract)."""

    # --- the SCM it needs -------------------------------------------------------
    #: Lower bounds on the SCM's drawn role counts (applied after the draw, so they
    #: consume no randomness).
    min_role_counts: ClassVar[Mapping[str, int]] = {}
    #: Upper bounds, applied the same way.
    max_role_counts: ClassVar[Mapping[str, int]] = {}
    #: A declared categorical effect modifier with this many levels (cate), a declared
    #: mediator (mediation).
    modifier_levels: ClassVar[tuple[int, int] | None] = None
    declared_mediator: ClassVar[bool] = False
    #: Staged rows are the tier's draw times this factor (per-level estimands need more).
    rows_factor: ClassVar[float] = 1.0
    #: Whether the family's effect classes decide the SCM's confounding (obs_vs_rct):
    #: the certificate then checks the class's promise, under one neutral reason.
    confounding_classes: ClassVar[bool] = False
    #: Generator 3's README line on effect sizes (staging/readme.py): what the
    #: hyperprior draws, and what the family builds from that draw.
    effect_size_subject: ClassVar[str] = "the true ATE"
    effect_size_detail: ClassVar[str] = ""

    def effect_size_note(self, declared: Mapping[str, str]) -> str:
        """What the README adds to the effect-size line about this family's estimands
        (a task's declared facts may say which generator's prior it was drawn from)."""
        return self.effect_size_detail

    def __init__(self, contract: FamilyContract) -> None:
        self.contract = contract

    @property
    def estimands(self) -> tuple[str, ...]:
        """The contract's estimand names (what the README's answer section counts)."""
        return self.contract.estimands

    # --- README wording -------------------------------------------------------
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
        """The README's identification contract, when it is not the shared backdoor
        contract (None keeps the shared one)."""
        return None

    # --- a design family's own model ------------------------------------------
    def design_candidate(
        self, plan: TaskPlan, streams: TaskStreams
    ) -> DesignCandidate | DesignRejection | None:
        """A design family's candidate, drawn from its own model and already staged
        (designs/candidate.py; the shared step generate/design_task.py finishes it);
        None for a family built on the shared SCM (every seed family)."""
        return None

    # --- drawing and certifying -----------------------------------------------
    def effect_class(self, key: DerivationKey, task_id: TaskId) -> EffectClass:
        """The effect class a task id commits to before its SCM is drawn."""
        from causal_gym.plan.task_plan import EffectClass

        return EffectClass.STANDARD

    def hidden_confounder(self, effect: EffectClass) -> bool:
        """Whether the SCM gets a confounder no declared column blocks (obs_vs_rct)."""
        return False

    def hidden_treatment_cause(self, effect: EffectClass, generator_version: int) -> bool:
        """Whether an SCM without a hidden confounder still gets an unobserved cause of
        the treatment alone, drawn the same way (obs_vs_rct under generator 3)."""
        return False

    def mediator_outcome_weight(
        self, rng: np.random.Generator, alpha: float, generator_version: int
    ) -> float:
        """The declared mediator's weight on the outcome, given the treatment's on the
        mediator (`alpha`): a family with `declared_mediator` draws it."""
        raise NotImplementedError(f"{self.contract.name} declares no mediator")

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

    # --- staging ----------------------------------------------------------------
    def stage_extra(
        self,
        scm: Scm,
        naming: Naming,
        mess_plan: MessPlan,
        plan: TaskPlan,
        streams: TaskStreams,
    ) -> StagedExtra | None:
        """The files the contract stages beyond data.csv and README.md (obs_vs_rct's
        randomized trial); None when a staged value falls outside its documented
        range (the candidate is rejected)."""
        return StagedExtra()

    def task_anchors(
        self,
        scm: Scm,
        marginals: Mapping[str, Marginal],
        rng: np.random.Generator,
        rows: Mapping[str, int],
        levels: tuple[str, ...],
    ) -> dict[str, float] | None:
        """Reward version 3's anchor r of each estimand of a multi-estimand task, a
        property of the task (the efficient estimator's 90% width at the staged size,
        from the hidden SCM and the keyed `anchor` stream); `rows` holds the clean rows
        of each staged file an honest analysis keeps, `levels` is as estimand_values
        has it. None: the family has no such
        anchor (a seed family's is generate/ols_anchor.py's, a design family's its
        candidate's)."""
        return None

    def anchor_spreads(
        self,
        scm: Scm,
        naming: Naming,
        rows: Mapping[str, int],
        replicates: int,
        rng: np.random.Generator,
    ) -> dict[str, tuple[float, float]] | None:
        """For each estimand, the centre its task anchor is built on and 2 z_0.95 SD of
        the efficient estimator on `replicates` fresh samples of the SCM
        (generate/fresh_rows.py; audit/anchor_spread.py compares them). None: the
        family has no such anchor."""
        return None

    # --- scoring ----------------------------------------------------------------
    def score_components(self, truth: HiddenTruth, submission: BaseModel) -> dict[str, float]:
        """Each of the contract's `components`, scored against the hidden truth."""
        return {}

    def total_reward(self, estimand_reward: float, components: Mapping[str, float]) -> float:
        """The reward training optimizes, from the estimand reward and the components."""
        return estimand_reward

    def check(self) -> None:
        """Raise FamilyContractError when the hooks contradict the contract."""
        name = self.contract.name
        if self.contract.per_level_estimands and self.modifier_levels is None:
            raise FamilyContractError(f"{name}: per-level estimands need a modifier")
        if self.contract.components and type(self).score_components is (
            FamilyHooks.score_components
        ):
            raise FamilyContractError(f"{name}: components need score_components()")


@cache
def hooks_of(family: str) -> FamilyHooks:
    """A family's hooks, loaded from the entry point its contract names."""
    contract = contract_of(family)
    cls = load_entry_point(contract.hooks, FamilyContractError)
    if not (isinstance(cls, type) and issubclass(cls, FamilyHooks)):
        raise FamilyContractError(f"{contract.hooks} is not a FamilyHooks subclass")
    hooks = cls(contract)
    hooks.check()
    return hooks
