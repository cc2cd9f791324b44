"""The backdoor criterion on a hidden DAG (latents included).

Shared by the generator's certificate and the adjustment-set scorer so that "valid
adjustment set" means exactly one thing across the project.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx


def backdoor_graph(graph: nx.DiGraph, treatment: str) -> nx.DiGraph:
    """The graph with the treatment's out-edges removed: only backdoor paths remain."""
    g = graph.copy()
    g.remove_edges_from(list(graph.out_edges(treatment)))
    return g


def satisfies_backdoor(
    graph: nx.DiGraph, treatment: str, outcome: str, adjustment: Iterable[str]
) -> bool:
    """Pearl's backdoor criterion: no descendant of T in Z, and Z d-separates T and Y
    once T's out-edges are gone."""
    z = set(adjustment)
    if treatment in z or outcome in z or not z <= set(graph.nodes):
        return False
    if z & nx.descendants(graph, treatment):
        return False
    return nx.is_d_separator(backdoor_graph(graph, treatment), {treatment}, {outcome}, z)
