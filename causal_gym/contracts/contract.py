"""What a family is to everyone who is not generating it: its contract.

A family's contract is light and importable anywhere, the worker side included (a
sandbox actor builds the `submit_answer` tool from the submission model): its name,
its submission model and estimands, the files it stages, its score components, the
frozen splits that hold it and how many of its tasks each holds, and the entry point
of its hooks. It imports pydantic and nothing numeric.

How a family's tasks are drawn, worded and scored against a truth is its hooks
(`FamilyHooks`, causal_gym/hooks.py), loaded by the entry-point string the contract
names, so nothing that reads a contract loads the generator.
"""

from __future__ import annotations

import re
from abc import ABC
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from causal_gym.contracts.submissions import AteSubmission
from causal_gym.errors import FamilyContractError
from causal_gym.namespaces import EXPERT_SPLIT, REAL_SPLIT, Namespace

#: (estimate, ci_lower, ci_upper) of one estimand in a submission.
Triple = tuple[float, float, float]
#: The files every family stages; a family may declare more (a second dataset).
DEFAULT_STAGED_FILES: tuple[str, ...] = ("data.csv", "README.md")
#: A family's name is one part of a task id: lower case, digits and underscores.
NAME_FORMAT = re.compile(r"[a-z][a-z0-9_]{0,31}")


class FamilyContract(ABC):
    """A family's declarations. Subclasses set the class attributes and override the
    methods whose default does not fit; instances are stateless singletons."""

    name: ClassVar[str]
    #: Column heading in reports and baseline tables.
    label: ClassVar[str]
    submission_model: ClassVar[type[BaseModel]]
    #: Named estimands, in the order the README and the score list them. A family
    #: whose names depend on the task (cate: one per modifier level) sets
    #: `per_level_estimands` and lists a placeholder here.
    estimands: ClassVar[tuple[str, ...]] = ("ate",)
    per_level_estimands: ClassVar[bool] = False
    #: Each task names one of `estimands` and the answer says which it estimates (the
    #: design families: contracts/designs.py).
    task_named_estimand: ClassVar[bool] = False
    staged_files: ClassVar[tuple[str, ...]] = DEFAULT_STAGED_FILES
    #: Named score components beyond the estimand reward (e.g. "validity").
    components: ClassVar[tuple[str, ...]] = ()
    #: The frozen splits that hold the family -> its tasks there (ids 0..count-1). A
    #: count in eval-expert-v1 means the family has an expert tier (a disclosed share
    #: of its train tasks is expert too). Train holds every family.
    splits: ClassVar[Mapping[Namespace, int]] = {}
    #: The sandbox-kit files (causal_gym/reference/) its reference analysis runs from,
    #: answer.py last (`python answer.py DIR` answers): analyst.py with flexible.py (the
    #: expert tier) and posterior.py (null_detect's posterior) for one ATE from
    #: data.csv; estimands.py beside analyst.py for several estimands or several files
    #: (then its probes are in estimand_probes.py).
    reference_kit: ClassVar[tuple[str, ...]] = (
        "analyst.py", "flexible.py", "posterior.py", "answer.py"
    )  # fmt: skip
    #: Task ids come in keyed blocks of this many whose effect classes are a fixed mix
    #: (null_detect: 20); a frozen split holds whole blocks, and an audit that wants
    #: the mix draws whole blocks.
    block_size: ClassVar[int] = 1
    #: Hack probes the audit runs on this family beyond the shared ones, by name.
    extra_probes: ClassVar[tuple[str, ...]] = ()
    #: "module:Class" of its FamilyHooks subclass (generation, README, scoring).
    hooks: ClassVar[str]

    @property
    def multi_estimand(self) -> bool:
        """Whether its reference runs estimands.py (several estimands, or several
        files), which the generator and the scripted agents branch on."""
        return "estimands.py" in self.reference_kit

    @property
    def expert_tier(self) -> bool:
        """Whether it has an expert tier (a count in eval-expert-v1)."""
        return EXPERT_SPLIT in self.splits

    @property
    def real_tier(self) -> bool:
        """Whether it has a real tier of real covariates (a count in eval-real-v1); a
        design family's real tier is its table's (realdata/sources.toml names it)."""
        return REAL_SPLIT in self.splits

    def probe_run(self, probe: str) -> tuple[tuple[str, ...], str]:
        """The kit files a probe agent (`probe`, its hyphenated name) copies into the
        sandbox and the command it runs there: the seed families' probes.py, the
        multi-estimand ones' estimand_probes.py (bayes-prior with the posterior and
        the priors the generator induces, written by scripts/estimand_priors.py)."""
        if self.multi_estimand:
            extra = ("posterior.py", "estimand_priors.json") if probe == "bayes-prior" else ()
            files = (*self.reference_kit, *extra, "estimand_probes.py")
            return files, f"python estimand_probes.py /workspace --probe {probe}"
        return (*self.reference_kit, "probes.py"), f"python probes.py /workspace --probe {probe}"

    def intervals(self, submission: BaseModel) -> dict[str, Triple]:
        """Each estimand's (estimate, lower, upper) in a validated submission."""
        if not isinstance(submission, AteSubmission):
            raise TypeError(f"a {self.name} task needs an AteSubmission")
        return {"ate": (submission.estimate, submission.ci_lower, submission.ci_upper)}

    def placeholder_answer(self, estimands: tuple[str, ...] = ()) -> dict[str, Any]:
        """A valid answer that uses no data (scripted agents and load tests submit it)."""
        return {"estimate": 0.0, "ci_lower": -1.0, "ci_upper": 1.0}

    def check(self) -> None:
        """Raise FamilyContractError when the declarations contradict each other."""
        if not NAME_FORMAT.fullmatch(getattr(self, "name", "")):
            raise FamilyContractError(
                f"{self!r}: a family's name is lower case, digits and underscores "
                f"(at most 32), got {getattr(self, 'name', None)!r}"
            )
        if not self.estimands or len(set(self.estimands)) != len(self.estimands):
            raise FamilyContractError(f"{self.name}: estimands must be distinct and non-empty")
        if not set(DEFAULT_STAGED_FILES) <= set(self.staged_files):
            raise FamilyContractError(f"{self.name}: data.csv and README.md must be staged")
        if any(count < 1 for count in self.splits.values()):
            raise FamilyContractError(f"{self.name}: a split must hold at least one task")
        if any(count % self.block_size for count in self.splits.values()):
            raise FamilyContractError(
                f"{self.name}: a split holds whole blocks of {self.block_size} ids"
            )
        if ":" not in getattr(self, "hooks", ""):
            raise FamilyContractError(f"{self.name}: hooks must be 'module:Class'")
        answer = self.submission_model.model_validate(self.placeholder_answer())
        if self.task_named_estimand:
            return  # each task answers one of its estimands (DesignContract.check)
        if not self.per_level_estimands and tuple(self.intervals(answer)) != self.estimands:
            raise FamilyContractError(f"{self.name}: intervals() must name {self.estimands}")
