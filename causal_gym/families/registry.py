"""The registered families: one line each, by entry point, in the order of eval-v1's
ids, the audit's jobs and train's interleave (a new family goes last).

Everything that used to list families (task ids, the splits and their counts, the
expert tier, the audit's groups, run configs, the verifiers taskset, the reports)
asks this module. A family is its contract module (light: families/contract.py) and
the hooks its contract names (loaded by string, on first use, where tasks are made
or scored); a package of its own registers one with `register("package.module:NAME")`
(docs/pages/extending.md).
"""

from __future__ import annotations

import importlib

from causal_gym.errors import FamilyContractError
from causal_gym.families.contract import FamilyContract

#: The built-in families, one line each.
BUILTIN: tuple[str, ...] = (
    "causal_gym.families.ate:CONTRACT",
    "causal_gym.families.adjustment:CONTRACT",
    "causal_gym.families.null_detect:CONTRACT",
    "causal_gym.families.cate:CONTRACT",
    "causal_gym.families.mediation:CONTRACT",
    "causal_gym.families.obs_vs_rct:CONTRACT",
)

_CONTRACTS: dict[str, FamilyContract] = {}


def load_entry_point(entry_point: str) -> object:
    module, _, attribute = entry_point.partition(":")
    if not module or not attribute:
        raise FamilyContractError(f"an entry point is 'module:attribute', got {entry_point!r}")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise FamilyContractError(f"cannot load {entry_point!r}: {exc}") from exc


def register(entry_point: str) -> FamilyContract:
    """Add the family whose contract `entry_point` names; its declarations are checked
    now, its hooks when they are first loaded. A name may be registered once."""
    contract = load_entry_point(entry_point)
    if not isinstance(contract, FamilyContract):
        raise FamilyContractError(f"{entry_point} is not a FamilyContract instance")
    contract.check()
    if contract.name in _CONTRACTS:
        raise FamilyContractError(f"family {contract.name!r} is already registered")
    _CONTRACTS[contract.name] = contract
    return contract


def family_names() -> tuple[str, ...]:
    """Every registered family, in registry order."""
    return tuple(_CONTRACTS)


def contract_of(family: str) -> FamilyContract:
    """A family's contract; a ValueError naming the accepted families otherwise."""
    try:
        return _CONTRACTS[str(family)]
    except KeyError:
        raise ValueError(
            f"unknown family {family!r}: accepted families are {', '.join(_CONTRACTS)}"
        ) from None


def contracts() -> tuple[FamilyContract, ...]:
    return tuple(_CONTRACTS.values())


def split_counts(split: str) -> dict[str, int]:
    """Tasks per family in a frozen split, as each family declares them, in registry
    order (ids 0..count-1 of each)."""
    return {c.name: c.splits[split] for c in _CONTRACTS.values() if split in c.splits}


def split_families(split: str) -> tuple[str, ...]:
    """The families a split holds (train: every family)."""
    return family_names() if split == "train" else tuple(split_counts(split))


def expert_families() -> tuple[str, ...]:
    """The families with an expert tier (a count in eval-expert-v1)."""
    return tuple(c.name for c in _CONTRACTS.values() if c.expert_tier)


def all_components() -> tuple[str, ...]:
    """Every family's score components, each once, in registry order: the named
    columns records, metrics and stream scores carry."""
    return tuple(dict.fromkeys(name for c in _CONTRACTS.values() for name in c.components))


for _entry in BUILTIN:
    register(_entry)
