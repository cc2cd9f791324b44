"""Imports in `orchestrator` run down its layers (the list in orchestrator/__init__.py):
a run's execution writes through the run folder's package and exports read through it,
the run folder imports neither, and nothing reaches a package above it, counting
deferred and type-only imports (the graph of tests/test_import_graph.py)."""

from __future__ import annotations

import networkx as nx

from tests.test_import_graph import import_graph

#: Top to bottom; packages on one line may not import each other.
LAYERS = (
    ("cli", "integrations"),
    ("stream",),
    ("run", "export"),
    ("records",),
    ("agents",),
    ("sandbox",),
    ("local_model",),
    ("host",),
    ("errors",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def part(module: str) -> str:
    """The top-level package (or module) of orchestrator that `module` is in."""
    return module.split(".")[1] if "." in module else module


def test_orchestrator_has_no_import_circles() -> None:
    graph = import_graph("orchestrator")
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, circles


def test_every_import_runs_down_a_layer() -> None:
    graph = import_graph("orchestrator")
    parts = {part(m) for m in graph.nodes if m != "orchestrator"}
    assert parts == set(RANK), parts ^ set(RANK)  # a new package gets its layer here
    upward = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if "orchestrator" not in (a, b) and part(a) != part(b) and RANK[part(a)] >= RANK[part(b)]
    )
    assert upward == [], upward


def test_the_layers_hold_the_edges_they_are_about() -> None:
    """The check above is not vacuous: execution and exports do use the run folder."""
    graph = import_graph("orchestrator")
    assert graph.has_edge("orchestrator.run.session", "orchestrator.records.read_back")
    assert graph.has_edge("orchestrator.export.inspect_log", "orchestrator.records.run_folder")
