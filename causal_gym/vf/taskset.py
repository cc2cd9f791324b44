"""The causal-gym verifiers taskset: `train` (infinite) or a frozen split (`eval-v1`,
the seed's three families; `eval-v2`, the multi-estimand ones; `eval-expert-v1`, the
expert tier of the seed's three; `eval-v3`, the design families iv, did, rdd)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, get_args

import verifiers.v1 as vf
from pydantic import Field

from causal_gym.splits.manifest import split_ids
from causal_gym.task_id import FAMILIES, NAMESPACES
from causal_gym.vf.keys import resolve_run_key
from causal_gym.vf.task import (
    WORKDIR,
    CausalGymTask,
    CausalGymTaskConfig,
    CausalGymTaskData,
    generated,
)

# verifiers builds its command-line choices from these Literals; both come from the
# family registry and the namespaces (mypy sees plain strings).
if TYPE_CHECKING:
    FamilyName = str
    SplitName = str
else:
    FamilyName = Literal[FAMILIES]
    SplitName = Literal[NAMESPACES]


class CausalGymTasksetConfig(vf.TasksetConfig):
    split: SplitName = "train"
    """`train`: unbounded, families interleaved (a fifth of the ate, adjustment and
    null_detect tasks are expert); `eval-v1` (500 tasks), `eval-v2` (450) or
    `eval-expert-v1` (300) or `eval-v3` (450): a frozen split in order."""
    families: list[FamilyName] = Field(default_factory=lambda: list(get_args(FamilyName)))
    """Families to draw from (train) or keep (a frozen split)."""
    task: CausalGymTaskConfig = CausalGymTaskConfig()


def train_ids(families: list[str]) -> Iterator[str]:
    for index in itertools.count():
        for family in families:
            yield f"train:{family}:{index}"


class CausalGymTaskset(vf.Taskset[CausalGymTask, CausalGymTasksetConfig]):
    """Causal inference from messy observational data with a calibrated reward."""

    def __init__(self, config: CausalGymTasksetConfig) -> None:
        super().__init__(config)
        self.INFINITE = config.split == "train"

    def task_ids(self) -> Iterator[str]:
        families = [f for f in FAMILIES if f in self.config.families]
        if self.config.split == "train":
            return train_ids(families)
        return (tid for tid in split_ids(self.config.split) if tid.split(":")[1] in families)

    def load(self) -> Iterator[CausalGymTask]:
        key = resolve_run_key(self.config.task.env_key)
        for task_id in self.task_ids():
            public = generated(task_id, key).public
            readme = public.files["README.md"].decode("utf-8")
            prompt = f"{public.prompt}\n\nHere is README.md:\n\n{readme}"
            data = CausalGymTaskData(
                id=task_id,
                prompt=prompt,
                workdir=WORKDIR,
                family=public.family.value,
                columns=list(public.columns),
                estimands=list(public.estimands),
            )
            yield CausalGymTask(data, self.config.task)
