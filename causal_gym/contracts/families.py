"""The registered families: one line each, in the order of eval-v1's ids, the audit's
jobs and train's interleave (a new family goes last), then installed packages' ones.

Everything that used to list families (task ids, the splits and their counts, the
expert tier, the audit's groups, run configs, the verifiers taskset, the reports)
asks this module. A family is its contract (light: contracts/contract.py) and the
hooks its contract names (loaded by string, on first use, where tasks are made or
scored: causal_gym/hooks.py). A package of its own adds one by installing, under the
entry-point group `causal_gym.families` (`name = "package.module:CONTRACT"`), or at
run time with `register_family` (docs/pages/extending.md).
"""

from __future__ import annotations

from typing import Any

from causal_gym.contracts.contract import FamilyContract
from causal_gym.errors import FamilyContractError, UnknownFamilyError
from causal_gym.namespaces import EXPERT_SPLIT, NAMESPACES, REAL_SPLIT, Namespace
from causal_gym.registries import Registry

#: The built-in families, one line each: name -> its contract's entry point.
BUILTIN: dict[str, str] = {
    "ate": "causal_gym.families.ate.contract:CONTRACT",
    "adjustment": "causal_gym.families.adjustment.contract:CONTRACT",
    "null_detect": "causal_gym.families.null_detect.contract:CONTRACT",
    "cate": "causal_gym.families.cate.contract:CONTRACT",
    "mediation": "causal_gym.families.mediation.contract:CONTRACT",
    "obs_vs_rct": "causal_gym.families.obs_vs_rct.contract:CONTRACT",
    "iv": "causal_gym.families.iv.contract:CONTRACT",
    "did": "causal_gym.families.did.contract:CONTRACT",
    "rdd": "causal_gym.families.rdd.contract:CONTRACT",
}


def _accept(name: str, loaded: Any) -> FamilyContract:
    """A registered family's contract: an instance, named as registered, consistent."""
    if not isinstance(loaded, FamilyContract):
        raise FamilyContractError(f"family {name!r}: {loaded!r} is not a FamilyContract")
    if loaded.name != name:
        raise FamilyContractError(f"family {name!r}: its contract is named {loaded.name!r}")
    loaded.check()
    return loaded


FAMILIES: Registry[FamilyContract] = Registry(
    "family", "families", UnknownFamilyError, group="causal_gym.families", accept=_accept
)
for _name, _entry in BUILTIN.items():
    FAMILIES.register(_name, _entry)


def register_family(entry: FamilyContract | str) -> FamilyContract:
    """Add a family now (a contract, or its `"module:attribute"`); its declarations are
    checked at once, its hooks when they are first loaded. A name is registered once."""
    contract = entry if isinstance(entry, FamilyContract) else _loaded(entry)
    FAMILIES.register(contract.name, contract)
    try:
        return FAMILIES.get(contract.name)
    except FamilyContractError:
        FAMILIES.unregister(contract.name)
        raise


def _loaded(entry: str) -> FamilyContract:
    from causal_gym.registries import load_entry_point

    loaded = load_entry_point(entry, FamilyContractError)
    if not isinstance(loaded, FamilyContract):
        raise FamilyContractError(f"{entry} is not a FamilyContract instance")
    return loaded


def family_names() -> tuple[str, ...]:
    """Every registered family, in registry order."""
    return FAMILIES.names()


def contract_of(family: str) -> FamilyContract:
    """A family's contract; UnknownFamilyError naming the accepted families otherwise."""
    return FAMILIES.get(str(family))


def contracts() -> tuple[FamilyContract, ...]:
    """Every registered family's contract, in registry order (each loaded on first use)."""
    return FAMILIES.values()


def split_counts(split: str) -> dict[str, int]:
    """Tasks per family in a frozen split, as each family declares them, in registry
    order (ids 0..count-1 of each)."""
    if split not in NAMESPACES:
        return {}
    wanted = Namespace(split)
    return {c.name: c.splits[wanted] for c in contracts() if wanted in c.splits}


def split_families(split: str) -> tuple[str, ...]:
    """The families a split holds (train: every family)."""
    return family_names() if split == Namespace.TRAIN else tuple(split_counts(split))


def expert_families() -> tuple[str, ...]:
    """The families with an expert tier (a count in eval-expert-v1)."""
    return tuple(c.name for c in contracts() if EXPERT_SPLIT in c.splits)


def real_families() -> tuple[str, ...]:
    """The families with a real tier (a count in eval-real-v1)."""
    return tuple(c.name for c in contracts() if REAL_SPLIT in c.splits)


def all_components() -> tuple[str, ...]:
    """Every family's score components, each once, in registry order: the named
    columns records, metrics and stream scores carry."""
    return tuple(dict.fromkeys(name for c in contracts() for name in c.components))
