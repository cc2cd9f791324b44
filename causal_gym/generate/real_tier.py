"""What the real tier adds to the shared build: which of a table's columns a task's
roots are (causal_gym/realdata/ holds the tables), the hidden graph's population
latent, and the README's note on the study.

The shared builder (build.py) asks `fit_to_table` how many roots a table can fill,
`choose_columns` which column each root slot is, `real_node` for a bound root's node
and `real_roots` for the binding the sampler reads (scm/real_roots.py); the pipeline
asks `truth_graph` for the graph the scorer judges adjustment sets on, and
`source_note` for the README.
"""

from __future__ import annotations

import numpy as np

from causal_gym.plan.task_plan import TaskPlan
from causal_gym.realdata.tables import RealColumn, RealTable, real_table
from causal_gym.scm.model import Kind, Node, Role, Scm
from causal_gym.scm.real_roots import RealRoots
from causal_gym.staging.source_note import SourceNote

#: The root roles a small table trims, in the order it trims them, each down to its
#: floor (a decoy's parent stays: adjustment needs one).
FITTED_ROLES = ("irrelevant", "predictors", "instruments", "confounders")
_FLOORS = {"irrelevant": 0, "predictors": 1, "instruments": 0, "confounders": 1}


def fit_to_table(sizes: dict[str, int], decoys: int, table: RealTable) -> dict[str, int]:
    """Root counts (FITTED_ROLES) the table's usable columns can fill, with `decoys`
    decoy parents beside them."""
    fitted = dict(sizes)
    excess = sum(fitted.values()) + decoys - len(table.columns)
    for name in FITTED_ROLES:
        give = min(max(excess, 0), fitted[name] - min(_FLOORS[name], fitted[name]))
        fitted[name] -= give
        excess -= give
    if excess > 0:
        raise ValueError(f"{table.key}'s {len(table.columns)} columns cannot fill the roots")
    return fitted


def real_node(node_id: str, role: Role, column: RealColumn) -> Node:
    """A root bound to a real column: its kind and frequencies are the table's."""
    if column.kind is Kind.BINARY:
        return Node(node_id, role, column.kind, prob=column.probs[1])
    if column.kind is Kind.CATEGORICAL:
        return Node(node_id, role, column.kind, level_probs=column.probs)
    return Node(node_id, role)


def choose_columns(
    table: RealTable, n_roots: int, rng: np.random.Generator
) -> list[RealColumn | None]:
    """The column of each root slot, by the `scm` stream: half the draws leave one
    slot (any role) simulated, None, so a column the study did not record may be a
    confounder or noise as well as a latent's proxy or a decoy."""
    simulated = int(rng.integers(0, 2))
    order = iter(rng.permutation(len(table.columns))[: n_roots - simulated])
    slots = set(rng.permutation(n_roots)[:simulated].tolist())
    return [None if s in slots else table.columns[int(next(order))] for s in range(n_roots)]


def real_roots(table: RealTable, bound: list[tuple[str, str]]) -> RealRoots:
    """The binding of root ids to the table's columns, with the values they read."""
    values = {node_id: table.column(name).values for node_id, name in bound}
    return RealRoots(table.key, table.n_rows, tuple(bound), values)


#: The hidden graph's name for what makes a real table's columns go together (its
#: study's own causes, never modelled): a latent parent of every column drawn from it,
#: so that adjustment validity is judged as if any two of them may share a cause.
REAL_POPULATION = "latent_population"


Edges = tuple[tuple[str, str], ...]


def truth_graph(scm: Scm, names: dict[str, str]) -> tuple[dict[str, str], Edges]:
    """The hidden graph's roles and edges, with the real tier's population latent."""
    roles = {names[n.id]: n.role.value for n in scm.nodes}
    edges = tuple((names[e.parent], names[e.child]) for e in scm.edges)
    if scm.real is None:
        return roles, edges
    roles[REAL_POPULATION] = REAL_POPULATION
    edges += tuple((REAL_POPULATION, names[node_id]) for node_id, _ in scm.real.columns)
    return roles, edges


def source_note(plan: TaskPlan) -> SourceNote | None:
    """What the README's Source section says of a real task's study (None otherwise)."""
    if plan.source is None:
        return None
    table = real_table(plan.source)
    return SourceNote(table.title, table.citation, table.n_rows)
