"""The registered families, by name, in the order of `Family` (which is the order of
eval-v1's ids, the audit's jobs and train's interleave: a new family goes last)."""

from __future__ import annotations

from causal_gym.families import adjustment, ate, cate, mediation, null_detect, obs_vs_rct
from causal_gym.families.base import FamilySpec
from causal_gym.task_id import Family

REGISTRY: dict[Family, FamilySpec] = {
    module.SPEC.name: module.SPEC
    for module in (ate, adjustment, null_detect, cate, mediation, obs_vs_rct)
}


#: Every family's score components, each once, in registry order: the named columns
#: records, metrics and stream scores carry.
ALL_COMPONENTS: tuple[str, ...] = tuple(
    dict.fromkeys(name for spec in REGISTRY.values() for name in spec.components)
)


def family_spec(family: Family | str) -> FamilySpec:
    """The spec of a family name (a ValueError for a name that is not a `Family`)."""
    return REGISTRY[Family(family)]


def registered() -> tuple[FamilySpec, ...]:
    return tuple(REGISTRY.values())


for _spec in REGISTRY.values():
    _spec.check()
