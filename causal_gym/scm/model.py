"""The hidden structural causal model: nodes, weighted edges and exact truths.

Every equation is linear in its parents (the treatment through a clipped logistic
index), discrete nodes are exogenous roots and latents are Gaussian. That keeps
E[Y | T, observed pre-treatment] exactly linear, so the honest adjusted OLS is
unbiased by construction and the population ATE is a finite sum over paths.

The expert tier's exception (`Scm.nonlinear`, scm/nonlinear.py) adds centered
nonlinear terms of observed confounder roots to T's index, to Y and to the effect of
T; being centered, they leave the ATE the same finite sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

import networkx as nx

from causal_gym.scm.nonlinear import Nonlinearity
from causal_gym.scm.real_roots import RealRoots

TREATMENT_ID = "T"
OUTCOME_ID = "Y"


class Role(StrEnum):
    TREATMENT = "treatment"
    OUTCOME = "outcome"
    CONFOUNDER = "confounder"
    BLOCKER = "latent_blocker"
    LATENT_CONFOUNDER = "latent_confounder"
    INSTRUMENT = "instrument"
    PREDICTOR = "outcome_predictor"
    IRRELEVANT = "irrelevant"
    DECOY_PARENT = "decoy_parent"
    DECOY = "collider_decoy"
    DECOY_LATENT = "decoy_latent"
    MEDIATOR = "mediator"
    DESCENDANT = "post_descendant"
    # Roles only the multi-estimand families draw (cate, mediation, obs_vs_rct).
    MODIFIER = "effect_modifier"
    DECLARED_MEDIATOR = "declared_mediator"
    HIDDEN_CONFOUNDER = "unobserved_confounder"
    #: obs_vs_rct's unconfounded extracts under generator 3: an unobserved cause of the
    #: treatment only, drawn as the confounder is, so that how the treatment was
    #: assigned (and how often a candidate breaks positivity) does not tell the classes.
    HIDDEN_TREATMENT_CAUSE = "unobserved_cause_of_treatment"


class Kind(StrEnum):
    CONTINUOUS = "continuous"
    BINARY = "binary"
    CATEGORICAL = "categorical"


class Timing(StrEnum):
    PRE = "pre-treatment"
    POST = "post-treatment"
    LATENT = "latent"
    TREATMENT = "treatment"
    OUTCOME = "outcome"
    MEDIATOR = "mediator"


LATENT_ROLES = frozenset(
    {
        Role.LATENT_CONFOUNDER,
        Role.DECOY_LATENT,
        Role.HIDDEN_CONFOUNDER,
        Role.HIDDEN_TREATMENT_CAUSE,
    }
)
POST_ROLES = frozenset({Role.MEDIATOR, Role.DESCENDANT})


@dataclass(frozen=True)
class Node:
    """One variable. `noise_sd`/`intercept` serve continuous nodes and Y,
    `prob` binary roots, `level_probs` categorical roots."""

    id: str
    role: Role
    kind: Kind = Kind.CONTINUOUS
    intercept: float = 0.0
    noise_sd: float = 1.0
    prob: float = 0.5
    level_probs: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind is Kind.CATEGORICAL and (
            len(self.level_probs) < 2 or abs(sum(self.level_probs) - 1.0) > 1e-9
        ):
            raise ValueError(f"categorical node {self.id} needs level probabilities summing to 1")
        if self.kind is Kind.BINARY and not 0.0 < self.prob < 1.0:
            raise ValueError(f"binary node {self.id} needs 0 < prob < 1")
        if self.noise_sd < 0:
            raise ValueError(f"node {self.id} has negative noise_sd")

    @property
    def observed(self) -> bool:
        return self.role not in LATENT_ROLES

    @property
    def timing(self) -> Timing:
        if self.role is Role.TREATMENT:
            return Timing.TREATMENT
        if self.role is Role.OUTCOME:
            return Timing.OUTCOME
        if self.role in LATENT_ROLES:
            return Timing.LATENT
        if self.role is Role.DECLARED_MEDIATOR:
            return Timing.MEDIATOR
        if self.role in POST_ROLES:
            return Timing.POST
        return Timing.PRE


@dataclass(frozen=True)
class Edge:
    """parent -> child with one weight, or one weight per level for a categorical parent."""

    parent: str
    child: str
    weights: tuple[float, ...]


@dataclass(frozen=True)
class Scm:
    """`interaction` (cate only) adds `interaction[level of modifier] * T` to Y: the
    effect of T differs by the modifier's level, level 0 carrying the base effect.
    `nonlinear` (the expert tier only) adds its terms to T's index and to Y. `real`
    (the real tier only) binds observed roots to the columns of a real table."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    propensity_band: tuple[float, float]
    modifier: str | None = None
    interaction: tuple[float, ...] = ()
    nonlinear: Nonlinearity | None = None
    real: RealRoots | None = None
    _by_id: dict[str, Node] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {n.id: n for n in self.nodes})
        if len(self._by_id) != len(self.nodes):
            raise ValueError("duplicate node ids in SCM")
        for edge in self.edges:
            if edge.parent not in self._by_id or edge.child not in self._by_id:
                raise ValueError(f"edge {edge.parent}->{edge.child} names an unknown node")
            parent = self._by_id[edge.parent]
            want = len(parent.level_probs) if parent.kind is Kind.CATEGORICAL else 1
            if len(edge.weights) != want:
                raise ValueError(f"edge {edge.parent}->{edge.child} needs {want} weights")
        if (self.modifier is None) != (not self.interaction) or (
            self.modifier is not None
            and len(self._by_id[self.modifier].level_probs) != len(self.interaction)
        ):
            raise ValueError("an interaction needs a categorical modifier, one weight per level")
        if self.nonlinear is not None:
            self._check_nonlinear(self.nonlinear)
        for node_id, _ in self.real.columns if self.real is not None else ():
            node = self._by_id.get(node_id)
            if node is None or not node.observed or any(e.child == node_id for e in self.edges):
                raise ValueError(f"real column bound to {node_id}, which is not an observed root")
        if not nx.is_directed_acyclic_graph(self.graph):
            raise ValueError("SCM graph has a cycle")
        order = {n.id: i for i, n in enumerate(self.nodes)}
        if any(order[e.parent] >= order[e.child] for e in self.edges):
            raise ValueError("SCM nodes must be listed in topological order")

    def _check_nonlinear(self, nonlinear: Nonlinearity) -> None:
        """Terms may read only continuous observed roots that are parents of both T and
        Y, so the graph stays the whole truth about who affects whom."""
        for node_id in nonlinear.inputs:
            node = self._by_id.get(node_id)
            parents_of = {e.child for e in self.edges if e.parent == node_id}
            if (
                node is None
                or node.kind is not Kind.CONTINUOUS
                or node.timing is not Timing.PRE
                or any(e.child == node_id for e in self.edges)
                or not {TREATMENT_ID, OUTCOME_ID} <= parents_of
            ):
                raise ValueError(f"nonlinear term input {node_id} is not a confounder root")

    def node(self, node_id: str) -> Node:
        return self._by_id[node_id]

    @cached_property
    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        g.add_nodes_from(n.id for n in self.nodes)
        g.add_edges_from((e.parent, e.child) for e in self.edges)
        return g

    def in_edges(self, node_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.child == node_id)

    def ids_with(self, *roles: Role) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.role in roles)

    @property
    def pre_treatment_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.timing is Timing.PRE)

    @property
    def post_treatment_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.timing is Timing.POST)

    @property
    def latent_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.timing is Timing.LATENT)

    def total_effect(self, source: str = TREATMENT_ID, target: str = OUTCOME_ID) -> float:
        """Exact total effect of a unit change in `source`: the sum over directed paths
        of the products of edge weights (valid because every node downstream of the
        treatment is linear and continuous)."""
        effect: dict[str, float] = {source: 1.0}
        for node in self.nodes:
            if node.id == source:
                continue
            total = 0.0
            for edge in self.in_edges(node.id):
                if edge.parent in effect:
                    if len(edge.weights) != 1:
                        raise ValueError(
                            f"categorical node {edge.parent} lies downstream of {source}"
                        )
                    total += edge.weights[0] * effect[edge.parent]
            if total != 0.0 or any(e.parent in effect for e in self.in_edges(node.id)):
                effect[node.id] = total
        return effect.get(target, 0.0)

    def level_effects(self) -> tuple[float, ...]:
        """Exact effect of T on Y within each level of the modifier (cate): the base
        effect plus that level's interaction, since nothing else in Y's equation
        multiplies T."""
        base = self.total_effect()
        return tuple(base + gamma for gamma in self.interaction)
