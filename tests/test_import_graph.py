"""Imports in `causal_gym` point one way: no module reaches itself through any chain
of imports, counting every import statement (top level, inside functions, and the
type-only ones under TYPE_CHECKING), so no circle is held together by a deferred
import. Modules named by entry-point strings (a family's hooks) are not imports."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: str) -> nx.DiGraph:
    modules = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
                    break
    return graph


def test_causal_gym_has_no_import_circles() -> None:
    graph = import_graph("causal_gym")
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, circles


def test_the_graph_sees_deferred_and_type_only_imports() -> None:
    """The checker itself: a function-level import and a TYPE_CHECKING one are edges."""
    graph = import_graph("causal_gym")
    assert graph.number_of_edges() > 200
    assert graph.has_edge("causal_gym.families.hooks", "causal_gym.task")  # type-only
    assert graph.has_edge("causal_gym.families.hooks", "causal_gym.plan.task_plan")  # deferred
