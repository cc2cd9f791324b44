"""The type boundary: what an agent may see versus what only the scorer may hold.

`PublicTask` carries nothing derived from the SCM except the staged bytes and the
public labels printed in them; `HiddenTruth` carries the answer. Neither refers to
the other. What crosses to a worker is neither: it is `PublicTask.to_wire(handle)`,
the public wire format (causal_gym/wire.py) with an opaque handle in place of the id.
`HiddenTruth` and `Task` are sealed (no pickling, redacted repr): they stay on the head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from causal_gym.contracts.families import contract_of
from causal_gym.contracts.schemas import submission_json_schema
from causal_gym.estimand import Estimand
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import Tier
from causal_gym.sealed import Sealed
from causal_gym.task_id import Family
from causal_gym.wire import TaskWire


@dataclass(frozen=True)
class PublicTask:
    """Everything an agent may see of a task: the staged files, the prompt and the
    public labels printed in them; nothing else derived from the SCM."""

    task_id: str
    family: Family
    tier: Tier
    n_rows: int
    files: Mapping[str, bytes]
    prompt: str
    pre_treatment_columns: tuple[str, ...]
    columns: tuple[str, ...]
    generation_attempts: int
    #: The names the submission answers (the estimands' keys): ("ate",) for the
    #: seed's families, the modifier's levels for cate.
    estimands: tuple[str, ...] = ("ate",)
    #: The real tier's source table (causal_gym/realdata/), which its README names.
    source: str | None = None

    def __post_init__(self) -> None:
        if sorted(self.files) != sorted(self.staged_files):
            raise ValueError(
                f"a {self.family.value} task stages exactly {self.staged_files}, "
                f"got {sorted(self.files)}"
            )
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))

    @property
    def staged_files(self) -> tuple[str, ...]:
        """The files the family stages, in its declared order."""
        return contract_of(self.family).staged_files

    def sha256(self, filename: str) -> str:
        """The hex sha256 of one staged file, as a manifest records it."""
        return hashlib.sha256(self.files[filename]).hexdigest()

    def to_wire(self, handle: str) -> TaskWire:
        """What a worker gets: the staged files, prompt, schema and family, under an
        opaque handle instead of the task id."""
        return TaskWire(
            handle=handle,
            family=self.family,
            files=dict(self.files),
            prompt=self.prompt,
            columns=self.columns,
            submission_schema=submission_json_schema(self.family),
            n_rows=self.n_rows,
            estimands=self.estimands,
        )

    def metadata(self) -> dict[str, Any]:
        """The public record printed by `causal-gym materialize` and stored in manifests."""
        return {
            "task_id": self.task_id,
            "family": self.family.value,
            "tier": self.tier.value,
            "n_rows": self.n_rows,
            "sha256": {name: self.sha256(name) for name in self.staged_files},
            "generation_attempts": self.generation_attempts,
            **({"source": self.source} if self.source is not None else {}),
        }


@dataclass(frozen=True, repr=False)
class HiddenTruth(Sealed):
    """The answer and the causal structure behind a task, for the scorer and for the
    debugging `inspect --reveal` only; sealed, so it stays on the head."""

    task_id: str
    family: Family
    tier: Tier
    effect_class: EffectClass
    #: The family's estimands by name (see causal_gym/estimand.py).
    estimands: Mapping[str, Estimand]
    treatment: str
    outcome: str
    pre_treatment: tuple[str, ...]
    post_treatment: tuple[str, ...]
    latent: tuple[str, ...]
    roles: Mapping[str, str]
    edges: tuple[tuple[str, str], ...]
    generation_attempts: int
    #: A design family's hidden difficulty cell (a weak instrument, staggered adoption
    #: with dynamic effects, a curved conditional mean); None for the seed families.
    subtier: str | None = None

    # The population ATE and its reference analysis: every family asks for it today.
    @property
    def ate(self) -> float:
        """The population ATE's exact value."""
        return self.estimands["ate"].value

    @property
    def reference_estimate(self) -> float | None:
        """The reference analysis's ATE estimate (None on the expert tier, which fits nothing)."""
        return self.estimands["ate"].reference_estimate

    @property
    def reference_se(self) -> float | None:
        """The reference analysis's standard error of the ATE (None on the expert tier)."""
        return self.estimands["ate"].reference_se

    @property
    def reference_width(self) -> float:
        """The ATE's anchor width r: a narrower interval pays the narrowness penalty."""
        return self.estimands["ate"].reference_width

    @property
    def scale(self) -> float:
        """The ATE's observable scale, which its loss is divided by."""
        return self.estimands["ate"].scale

    def reveal(self) -> dict[str, Any]:
        """JSON-ready dump for `causal-gym inspect --reveal` (debugging only): every
        estimand under `estimands`, and the ATE's numbers at the top level too when
        the family asks for it."""
        estimands = {
            name: {
                "value": e.value,
                "reference_estimate": e.reference_estimate,
                "reference_se": e.reference_se,
                "reference_width": e.reference_width,
            }
            for name, e in self.estimands.items()
        }
        ate = {"ate": estimands["ate"].pop("value")} if "ate" in estimands else {}
        return {
            "task_id": self.task_id,
            "family": self.family.value,
            "tier": self.tier.value,
            "effect_class": self.effect_class.value,
            "treatment": self.treatment,
            "outcome": self.outcome,
            **ate,
            **(estimands.get("ate", {}) if ate else {"estimands": estimands}),
            "pre_treatment": list(self.pre_treatment),
            "post_treatment": list(self.post_treatment),
            "latent": list(self.latent),
            "roles": dict(self.roles),
            "edges": [list(edge) for edge in self.edges],
            "scale": next(iter(self.estimands.values())).scale,
            "generation_attempts": self.generation_attempts,
            **({"subtier": self.subtier} if self.subtier is not None else {}),
        }


@dataclass(frozen=True, repr=False)
class Task(Sealed):
    """A generated task: the public half an agent sees and the hidden truth it is scored
    against, kept together on the head (sealed)."""

    public: PublicTask
    hidden: HiddenTruth
