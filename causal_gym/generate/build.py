"""Draw one candidate SCM for a task from its `scm` stream.

The shape is fixed by role (who points at whom) so that the full declared
pre-treatment set is a valid backdoor set by construction; the certificate then
checks that claim on the actual graph instead of trusting this module.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from causal_gym.generate.real_tier import (
    FITTED_ROLES,
    choose_columns,
    fit_to_table,
    real_node,
    real_roots,
)
from causal_gym.hooks import FamilyHooks, hooks_of
from causal_gym.plan.effects import EffectPrior
from causal_gym.plan.task_plan import EffectClass
from causal_gym.plan.tiers import TierSpec
from causal_gym.realdata.tables import RealColumn, RealTable
from causal_gym.scm.model import OUTCOME_ID, TREATMENT_ID, Edge, Kind, Node, Role, Scm
from causal_gym.scm.nonlinear import draw_nonlinearity
from causal_gym.task_id import Family

PROPENSITY_BAND = (0.05, 0.95)


@dataclass(frozen=True)
class RoleCounts:
    confounders: int
    blockers: int
    instruments: int
    predictors: int
    irrelevant: int
    decoys: int
    binary: int
    categorical: int
    mediators: int
    descendants: int


def draw_counts(spec: TierSpec, family: Family, rng: np.random.Generator) -> RoleCounts:
    def pick(bounds: tuple[int, int]) -> int:
        return int(rng.integers(bounds[0], bounds[1] + 1))

    counts = {name: pick(getattr(spec, name)) for name in RoleCounts.__dataclass_fields__}
    shape = hooks_of(family)
    for name, least in shape.min_role_counts.items():
        counts[name] = max(counts[name], least)  # after the draws: no randomness used
    for name, most in shape.max_role_counts.items():
        counts[name] = min(counts[name], most)
    return RoleCounts(**counts)


class _Builder:
    """Accumulates nodes in topological order and edges with drawn weights."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []

    def signed(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high) * self.rng.choice((-1.0, 1.0)))

    def add(self, node: Node) -> str:
        self.nodes.append(node)
        return node.id

    def kind_of(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)

    def link(self, parent: str, child: str, weight: float) -> None:
        """A continuous-scale weight; discrete parents get a per-variance rescale."""
        node = self.kind_of(parent)
        if node.kind is Kind.CATEGORICAL:
            levels = len(node.level_probs)
            spread = self.rng.normal(0.0, abs(weight), levels - 1)
            weights = (0.0, *(float(w) for w in spread))
        elif node.kind is Kind.BINARY:
            weights = (2.0 * weight,)
        else:
            weights = (weight,)
        self.edges.append(Edge(parent, child, weights))

    def root(self, node_id: str, role: Role, kind: Kind) -> str:
        if kind is Kind.BINARY:
            return self.add(Node(node_id, role, kind, prob=float(self.rng.uniform(0.2, 0.6))))
        if kind is Kind.CATEGORICAL:
            levels = int(self.rng.integers(3, 5))
            draw = self.rng.dirichlet(np.full(levels, 4.0))
            head = [float(p) for p in draw[:-1]]
            probs = (*head, 1.0 - sum(head))
            return self.add(Node(node_id, role, kind, level_probs=probs))
        return self.add(Node(node_id, role))

    def child(
        self, node_id: str, role: Role, parents: list[tuple[str, float]], noise: float
    ) -> str:
        self.add(Node(node_id, role, noise_sd=noise))
        for parent, weight in parents:
            self.link(parent, node_id, weight)
        return node_id


def _root_kinds(n_roots: int, counts: RoleCounts, rng: np.random.Generator) -> list[Kind]:
    kinds = [Kind.CONTINUOUS] * n_roots
    n_binary = min(counts.binary, n_roots)
    n_categorical = min(counts.categorical, n_roots - n_binary)
    chosen = rng.permutation(n_roots)[: n_binary + n_categorical]
    for i, slot in enumerate(chosen):
        kinds[int(slot)] = Kind.BINARY if i < n_binary else Kind.CATEGORICAL
    return kinds


def build_scm(
    spec: TierSpec,
    family: Family,
    prior: EffectPrior,
    rng: np.random.Generator,
    effect_rng: np.random.Generator,
    expert: bool = False,
    table: RealTable | None = None,
) -> Scm:
    """`prior` draws the effect (plan/effects.py; `effect_rng` is its own stream).
    `expert` adds nonlinear terms (scm/nonlinear.py), drawn after everything else so
    the linear part is the one a non-expert task of the same tier would draw. `table`
    (the real tier) binds the observed roots to its columns, chosen by the stream, and
    the columns' kinds replace the tier's binary and categorical draws; half the
    draws leave one root, in any role, simulated: so a column the study did not record
    may be a confounder, an instrument or noise as well as a latent's proxy or a
    decoy, and its name cannot tell its role."""
    effect = prior.effect
    scm = _linear_scm(spec, family, prior, rng, effect_rng, table)
    if not expert:
        return scm
    sources = [
        n.id
        for n in scm.nodes
        if n.role is Role.CONFOUNDER and n.kind is Kind.CONTINUOUS and not scm.in_edges(n.id)
    ]
    if not sources:  # the certificate rejects an expert candidate without terms
        return scm
    no_effect = effect is EffectClass.STRUCTURAL_NULL
    return dataclasses.replace(scm, nonlinear=draw_nonlinearity(sources, no_effect, rng))


def _linear_scm(
    spec: TierSpec,
    family: Family,
    prior: EffectPrior,
    rng: np.random.Generator,
    effect_rng: np.random.Generator,
    table: RealTable | None = None,
) -> Scm:
    effect = prior.effect
    counts = draw_counts(spec, family, rng)
    if table is not None:
        sizes = {name: getattr(counts, name) for name in FITTED_ROLES}
        counts = dataclasses.replace(counts, **fit_to_table(sizes, counts.decoys, table))
    b = _Builder(rng)

    root_roles = (
        [("c", Role.CONFOUNDER)] * counts.confounders
        + [("z", Role.INSTRUMENT)] * counts.instruments
        + [("p", Role.PREDICTOR)] * counts.predictors
        + [("a", Role.DECOY_PARENT)] * counts.decoys
        + [("r", Role.IRRELEVANT)] * counts.irrelevant
    )
    bound: list[RealColumn | None] = []
    if table is None:
        kinds = _root_kinds(len(root_roles), counts, rng)
    else:  # the table's columns, and at most one simulated root in any role
        bound = choose_columns(table, len(root_roles), rng)
        kinds = [Kind.CONTINUOUS if c is None else c.kind for c in bound]
    seen: dict[str, int] = {}
    roots: dict[Role, list[str]] = {}
    deferred_irrelevant: list[str] = []
    real_columns: list[tuple[str, str]] = []
    for slot, ((prefix, role), kind) in enumerate(zip(root_roles, kinds, strict=True)):
        node_id = f"{prefix}{seen.setdefault(prefix, 0)}"
        seen[prefix] += 1
        column = bound[slot] if bound else None
        if column is not None:  # the real tier: a root that is a column of the table
            roots.setdefault(role, []).append(b.add(real_node(node_id, role, column)))
            real_columns.append((node_id, column.name))
            continue
        if table is not None:  # its simulated root: named from the study's pool
            roots.setdefault(role, []).append(b.root(node_id, role, Kind.CONTINUOUS))
            continue
        if role is Role.IRRELEVANT and kind is Kind.CONTINUOUS and rng.random() < 0.5:
            deferred_irrelevant.append(node_id)  # becomes a child of another covariate
            continue
        roots.setdefault(role, []).append(b.root(node_id, role, kind))

    latents = [
        b.root(f"l{i}", Role.LATENT_CONFOUNDER, Kind.CONTINUOUS) for i in range(counts.blockers)
    ]
    decoy_latents = [
        b.root(f"u{i}", Role.DECOY_LATENT, Kind.CONTINUOUS) for i in range(counts.decoys)
    ]

    blockers = []
    for i, latent in enumerate(latents):
        w = float(rng.uniform(0.6, 0.9))
        blockers.append(b.child(f"b{i}", Role.BLOCKER, [(latent, w)], math.sqrt(1 - w * w)))
    for i, (parent, latent) in enumerate(
        zip(roots.get(Role.DECOY_PARENT, []), decoy_latents, strict=True)
    ):
        b.child(
            f"d{i}", Role.DECOY, [(parent, b.signed(0.5, 0.9)), (latent, b.signed(0.5, 0.9))], 0.5
        )

    continuous_sources = [
        n.id
        for n in b.nodes
        if n.kind is Kind.CONTINUOUS and n.role in (Role.CONFOUNDER, Role.PREDICTOR)
    ]
    for node_id in deferred_irrelevant:
        if continuous_sources:
            parent = continuous_sources[int(rng.integers(len(continuous_sources)))]
            w = float(rng.uniform(0.3, 0.7))
            b.child(node_id, Role.IRRELEVANT, [(parent, w)], math.sqrt(1 - w * w))
        else:
            b.root(node_id, Role.IRRELEVANT, Kind.CONTINUOUS)

    shape = hooks_of(family)
    extra_y: list[tuple[str, float]] = []
    extra_t: list[str] = []
    if shape.modifier_levels is not None:
        modifier = _modifier(b, shape.modifier_levels)
        extra_t.append(modifier)
        extra_y.append((modifier, b.signed(0.3, 0.6)))
    hidden = None
    if shape.hidden_confounder(effect):
        hidden = b.root("h0", Role.HIDDEN_CONFOUNDER, Kind.CONTINUOUS)
        extra_y.append((hidden, b.signed(0.8, 1.5)))
    elif shape.hidden_treatment_cause(effect, prior.generator_version):
        hidden = b.root("h0", Role.HIDDEN_TREATMENT_CAUSE, Kind.CONTINUOUS)
        b.signed(0.8, 1.5)  # the confounder's weight on Y, drawn and unused: same streams

    # Treatment: every parent is an observed pre-treatment covariate, so adjusting for
    # all of them blocks every backdoor path at its first step (a hidden confounder,
    # obs_vs_rct's confounded class only, is the deliberate exception).
    t_parents = (
        roots.get(Role.CONFOUNDER, [])
        + roots.get(Role.INSTRUMENT, [])
        + blockers
        + roots.get(Role.DECOY_PARENT, [])
        + extra_t
    )
    scale = spec.propensity_strength / math.sqrt(max(len(t_parents), 1))
    b.add(Node(TREATMENT_ID, Role.TREATMENT, intercept=float(rng.uniform(-0.6, 0.6))))
    for parent in t_parents:
        b.link(parent, TREATMENT_ID, b.signed(0.5, 1.0) * scale)
    if hidden is not None:  # strong, so that a confounder's bias is material
        b.link(hidden, TREATMENT_ID, b.signed(1.0, 1.5))

    is_null = effect is EffectClass.STRUCTURAL_NULL
    target = prior.draw(rng, effect_rng)
    mediated = 0.0
    mediator_links: list[tuple[str, float]] = []
    for i in range(counts.mediators):
        alpha = b.signed(0.4, 1.0)
        m = b.child(f"m{i}", Role.MEDIATOR, [(TREATMENT_ID, alpha)], 1.0)
        if not is_null:
            delta = b.signed(0.2, 0.6)
            mediated += alpha * delta
            mediator_links.append((m, delta))

    if shape.declared_mediator:
        mediator, alpha, delta = _declared_mediator(
            b, roots.get(Role.CONFOUNDER, []), is_null, shape, prior.generator_version
        )
        mediated += alpha * delta
        mediator_links.append((mediator, delta))

    y_parents: list[tuple[str, float]] = list(extra_y)
    y_parents += [(c, b.signed(0.3, 0.6)) for c in roots.get(Role.CONFOUNDER, [])]
    y_parents += [(p, b.signed(0.2, 0.6)) for p in roots.get(Role.PREDICTOR, [])]
    y_parents += [(u, b.signed(0.3, 0.6)) for u in latents + decoy_latents]
    y_parents += mediator_links
    direct = target - mediated
    if not is_null and direct != 0.0:
        y_parents.append((TREATMENT_ID, direct))
    b.child(OUTCOME_ID, Role.OUTCOME, y_parents, float(rng.uniform(*spec.outcome_noise_sd)))

    for i in range(counts.descendants):
        mode = int(rng.integers(3))  # 0: of T, 1: of Y, 2: of both
        parents = []
        if mode in (0, 2):
            parents.append((TREATMENT_ID, b.signed(0.5, 1.0)))
        if mode in (1, 2):
            parents.append((OUTCOME_ID, b.signed(0.4, 0.9)))
        b.child(f"e{i}", Role.DESCENDANT, parents, float(rng.uniform(0.5, 1.0)))

    real = real_roots(table, real_columns) if table is not None else None
    if shape.modifier_levels is None:
        return Scm(tuple(b.nodes), tuple(b.edges), PROPENSITY_BAND, real=real)
    levels = len(b.kind_of("k0").level_probs)
    interaction = (0.0, *(b.signed(0.2, 0.8) for _ in range(levels - 1)))
    return Scm(tuple(b.nodes), tuple(b.edges), PROPENSITY_BAND, "k0", interaction, real=real)


def _modifier(b: _Builder, level_range: tuple[int, int]) -> str:
    """The cate family's declared modifier: a categorical confounder whose every level
    keeps a fair share of the rows (half a Dirichlet draw, half uniform), so each
    level's effect can be estimated."""
    levels = int(b.rng.integers(level_range[0], level_range[1] + 1))
    draw = 0.5 * b.rng.dirichlet(np.full(levels, 4.0)) + 0.5 / levels
    head = [float(p) for p in draw[:-1]]
    return b.add(Node("k0", Role.MODIFIER, Kind.CATEGORICAL, level_probs=(*head, 1.0 - sum(head))))


def _declared_mediator(
    b: _Builder,
    confounders: list[str],
    is_null: bool,
    shape: FamilyHooks,
    generator_version: int,
) -> tuple[str, float, float]:
    """The mediation family's declared mediator: caused by T and by up to two
    observed confounders (so the mediator-outcome relation is confounded, but only
    through declared pre-treatment columns). Returns its id, the T->M and the M->Y
    weights; the family's hooks draw the second (its prior depends on the generator)."""
    alpha = b.signed(0.5, 1.0)
    parents = [(TREATMENT_ID, alpha)]
    chosen = b.rng.permutation(len(confounders))[: min(2, len(confounders))]
    parents += [(confounders[int(i)], b.signed(0.2, 0.5)) for i in chosen]
    delta = 0.0 if is_null else shape.mediator_outcome_weight(b.rng, alpha, generator_version)
    return b.child("k1", Role.DECLARED_MEDIATOR, parents, 1.0), alpha, delta
