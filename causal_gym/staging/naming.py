"""Domain-themed column names from the `naming` stream, chosen before sampling.

Names are drawn per kind (numeric, yes/no, category, follow-up) without regard to
causal role, so the same column name is a confounder in one task and pure noise in
the next: a name can never tell an agent what a column does. The one structural fact
a name carries is that counts and integer scores are exogenous (a sum of parents is
not an integer): nodes with parents are named first, from the pool's real, positive
and bounded entries, and roots take any remaining name. A root's name fixes the
marginal it is drawn from; a non-root's location and scale are placed after sampling.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from causal_gym.scm.marginals import DISCRETE_KINDS, Marginal, ValueKind, fit_marginal
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Kind, Node, Role, Scm, Timing

OUTCOME_DECIMALS = 4


@dataclass(frozen=True)
class Theme:
    key: str
    unit: str
    population: str
    setting: str
    treatment: tuple[dict, ...]
    outcome: tuple[dict, ...]
    continuous: tuple[dict, ...]
    binary: tuple[dict, ...]
    categorical: tuple[dict, ...]
    post: tuple[dict, ...]
    #: Categorical columns with five levels that cate tasks declare as the modifier.
    modifier: tuple[dict, ...] = ()


@dataclass(frozen=True)
class ColumnSpec:
    """Public facts about one staged column plus how its values are written."""

    node_id: str
    name: str
    timing: Timing
    kind: Kind
    description: str
    unit: str = ""
    mean: float = 0.0
    sd: float = 1.0
    levels: tuple[str, ...] = ()
    decimals: int = 4
    value_kind: ValueKind | None = None  # numeric columns only
    low: float | None = None
    high: float | None = None
    marginal: Marginal | None = None  # exogenous roots only
    #: A real table's column (the real tier): written as the table holds it, never placed.
    real: bool = False


@dataclass(frozen=True)
class Naming:
    theme: Theme
    columns: dict[str, ColumnSpec]

    def name_of(self, node_id: str) -> str:
        return self.columns[node_id].name

    @property
    def marginals(self) -> dict[str, Marginal]:
        return {k: c.marginal for k, c in self.columns.items() if c.marginal is not None}


@cache
def load_themes() -> tuple[Theme, ...]:
    raw = tomllib.loads(
        resources.files("causal_gym.staging").joinpath("themes.toml").read_text("utf-8")
    )
    themes = []
    for entry in raw["theme"]:
        lists = {
            k: tuple(entry[k])
            for k in ("treatment", "outcome", "continuous", "binary", "categorical", "post")
        }
        lists["modifier"] = tuple(entry.get("modifier", ()))
        themes.append(
            Theme(entry["key"], entry["unit"], entry["population"], entry["setting"], **lists)
        )
    return tuple(themes)


def decimals_for(sd: float) -> int:
    """Enough decimals that rounding adds well under 0.1% of a column's spread."""
    return min(6, max(2, 3 - math.floor(math.log10(sd))))


def take(pool: tuple[dict, ...], count: int, rng: np.random.Generator) -> list[dict]:
    if count > len(pool):
        raise ValueError(f"theme pool of {len(pool)} names cannot name {count} columns")
    return [pool[int(i)] for i in rng.choice(len(pool), size=count, replace=False)]


def treatment_and_outcome(theme: Theme, rng: np.random.Generator) -> dict[str, ColumnSpec]:
    """The treatment's and the outcome's names, drawn from the theme's pools."""
    columns: dict[str, ColumnSpec] = {}
    t = take(theme.treatment, 1, rng)[0]
    columns[TREATMENT_ID] = ColumnSpec(
        TREATMENT_ID, t["name"], Timing.TREATMENT, Kind.BINARY, t["description"]
    )
    y = take(affine(theme.outcome), 1, rng)[0]
    columns[OUTCOME_ID] = ColumnSpec(
        OUTCOME_ID,
        y["name"],
        Timing.OUTCOME,
        Kind.CONTINUOUS,
        y["description"],
        mean=float(y["offset"]),
        decimals=OUTCOME_DECIMALS,
        **_bounds(y),
    )
    return columns


def name_columns(scm: Scm, rng: np.random.Generator) -> Naming:
    themes = load_themes()
    theme = themes[int(rng.integers(len(themes)))]
    observed = [n for n in scm.nodes if n.observed]
    columns = treatment_and_outcome(theme, rng)

    def group(kind: Kind, timing: Timing) -> list[Node]:
        return [n for n in observed if n.kind is kind and n.timing is timing]

    def has_parents(node: Node) -> bool:
        return bool(scm.in_edges(node.id))

    pre = group(Kind.CONTINUOUS, Timing.PRE)
    derived = [n for n in pre if has_parents(n)]
    derived_entries = take(affine(theme.continuous), len(derived), rng)
    taken = {e["name"] for e in derived_entries}
    roots = [n for n in pre if not has_parents(n)]
    root_entries = take(
        tuple(e for e in theme.continuous if e["name"] not in taken), len(roots), rng
    )
    for node, entry in zip([*derived, *roots], [*derived_entries, *root_entries], strict=True):
        columns[node.id] = numeric_spec(node.id, Timing.PRE, entry, root=not has_parents(node))
    post = group(Kind.CONTINUOUS, Timing.POST)
    mediators = group(Kind.CONTINUOUS, Timing.MEDIATOR)  # mediation's declared one
    post_entries = take(affine(theme.post), len(post) + len(mediators), rng)
    for node, entry in zip([*post, *mediators], post_entries, strict=True):
        columns[node.id] = numeric_spec(node.id, node.timing, entry, root=False)
    for node, entry in zip(
        binary := group(Kind.BINARY, Timing.PRE), take(theme.binary, len(binary), rng), strict=True
    ):
        columns[node.id] = ColumnSpec(
            node.id, entry["name"], Timing.PRE, Kind.BINARY, entry["description"]
        )
    for node in group(Kind.CATEGORICAL, Timing.PRE):
        taken = {c.name for c in columns.values()}
        if node.role is Role.MODIFIER:
            columns[node.id] = _modifier(node, theme, taken, rng)
            continue
        fits = tuple(
            c
            for c in theme.categorical
            if len(c["levels"]) >= len(node.level_probs) and c["name"] not in taken
        )
        columns[node.id] = _categorical(node, take(fits, 1, rng)[0], rng)
    missing = {n.id for n in observed} - set(columns)
    if missing:
        raise ValueError(f"no name assigned to nodes {sorted(missing)}")
    return Naming(theme, columns)


def _modifier(node: Node, theme: Theme, taken: set[str], rng: np.random.Generator) -> ColumnSpec:
    """The cate family's declared modifier, from the theme's five-level pool."""
    fits = tuple(c for c in theme.modifier if c["name"] not in taken)
    return _categorical(node, take(fits, 1, rng)[0], rng)


def _categorical(node: Node, entry: dict, rng: np.random.Generator) -> ColumnSpec:
    """A categorical column named by `entry`, with as many of its levels as the node has."""
    chosen = take(tuple({"level": lv} for lv in entry["levels"]), len(node.level_probs), rng)
    return ColumnSpec(
        node.id,
        entry["name"],
        Timing.PRE,
        Kind.CATEGORICAL,
        entry["description"],
        levels=tuple(c["level"] for c in chosen),
    )


def affine(pool: tuple[dict, ...]) -> tuple[dict, ...]:
    """Entries a node with parents can be written as (no counts, no integer scores)."""
    return tuple(e for e in pool if ValueKind(e["kind"]) not in DISCRETE_KINDS)


def _bounds(entry: dict) -> dict:
    kind = ValueKind(entry["kind"])
    low = entry.get("low", 0.0 if kind in (ValueKind.POSITIVE, ValueKind.COUNT) else None)
    high = entry.get("high")
    return {
        "value_kind": kind,
        "low": None if low is None else float(low),
        "high": None if high is None else float(high),
    }


def numeric_spec(node_id: str, timing: Timing, entry: dict, root: bool) -> ColumnSpec:
    """A root is drawn from the marginal its entry fits, and written exactly; a node
    with parents keeps the entry's mean and SD until placement sets its scale."""
    bounds = _bounds(entry)
    mean, sd = float(entry["mean"]), float(entry["sd"])
    marginal = None
    if root:
        marginal = fit_marginal(bounds["value_kind"], mean, sd, bounds["low"], bounds["high"])
        mean, sd = marginal.mean, marginal.sd
    discrete = bounds["value_kind"] in DISCRETE_KINDS
    return ColumnSpec(
        node_id,
        entry["name"],
        timing,
        Kind.CONTINUOUS,
        entry["description"],
        unit=entry.get("unit", ""),
        mean=mean,
        sd=sd,
        decimals=0 if discrete else decimals_for(sd),
        marginal=marginal,
        **bounds,
    )
