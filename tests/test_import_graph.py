"""Imports in `causal_gym` point one way: no module reaches itself through any chain
of imports, counting every import statement (top level, inside functions, and the
type-only ones under TYPE_CHECKING) and the package `__init__` modules an import
runs first, so no circle is held together by a deferred import. Modules named by
entry-point strings (a family's contract and hooks) are not imports.

The same holds between rooms (each top-level package or module of `causal_gym`, as
`farm-studio look` draws them): drawn that way the house has floors, and no import
climbs back up. And no module outside a family's folder imports the family: shared
code asks the registry. A further test imports every module first, each in a process
where no other module of the package is loaded (forked from a server that holds only
third-party libraries: tests/support/import_first.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

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
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    parent = target.rpartition(".")[0]
                    while parent:
                        if (
                            parent in modules
                            and parent != name
                            and not name.startswith(parent + ".")
                        ):
                            graph.add_edge(name, parent)
                        parent = parent.rpartition(".")[0]
                    break
    return graph


def test_causal_gym_has_no_import_circles() -> None:
    graph = import_graph("causal_gym")
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, circles


def room(module: str) -> str:
    """The room a module stands in: `causal_gym.<first part>` (a package or a module)."""
    return ".".join(module.split(".")[:2])


def climbing_imports(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """The imports between rooms that sit on a circle of rooms: drawn room by room, the
    ones that run back up a floor. (The package root re-exports names lazily and is no
    room: nothing in the house imports it.)"""
    rooms = nx.DiGraph()
    for a, b in graph.edges:
        if room(a) != room(b) and room(a) != "causal_gym" and room(b) != "causal_gym":
            rooms.add_edge(room(a), room(b))
    tangled = {r for c in nx.strongly_connected_components(rooms) if len(c) > 1 for r in c}
    return sorted(
        (a, b)
        for a, b in graph.edges
        if room(a) != room(b) and room(a) in tangled and room(b) in tangled
        and nx.has_path(rooms, room(b), room(a))
    )  # fmt: skip


def family_imports(graph: nx.DiGraph) -> list[tuple[str, str]]:
    """Imports of a family's folder from outside it."""
    found = []
    for a, b in graph.edges:
        parts = b.split(".")
        if b.startswith("causal_gym.families.") and len(parts) > 2 and parts[2] != "conformance":
            folder = ".".join(parts[:3])
            if not (a == folder or a.startswith(folder + ".")):
                found.append((a, b))
    return sorted(found)


def test_no_import_climbs_back_up_and_no_shared_module_imports_a_family() -> None:
    graph = import_graph("causal_gym")
    assert climbing_imports(graph) == []
    assert family_imports(graph) == []


def test_the_checks_fail_on_a_climbing_import_and_a_family_import() -> None:
    """The two checks above can fail: the import graph with one import added that the
    old house had (plan/task_plan.py took null_detect's block counts, and scm/build.py
    asked the hooks, which read the SCM's types)."""
    graph = import_graph("causal_gym")
    graph.add_edge("causal_gym.plan.task_plan", "causal_gym.families.null_detect.contract")
    assert family_imports(graph) == [
        ("causal_gym.plan.task_plan", "causal_gym.families.null_detect.contract")
    ]
    climbing = import_graph("causal_gym")
    climbing.add_edge("causal_gym.scm.model", "causal_gym.hooks")
    assert ("causal_gym.scm.model", "causal_gym.hooks") in climbing_imports(climbing)


def test_the_graph_sees_deferred_and_type_only_imports() -> None:
    """The checker itself: a function-level import and a TYPE_CHECKING one are edges."""
    graph = import_graph("causal_gym")
    assert graph.number_of_edges() > 200
    assert graph.has_edge("causal_gym.hooks", "causal_gym.task")  # type-only
    assert graph.has_edge("causal_gym.hooks", "causal_gym.plan.task_plan")  # deferred


IMPORT_FIRST = Path(__file__).resolve().parent / "support" / "import_first.py"


def modules_failing_when_imported_first(package: str, names: list[str], cwd: Path) -> list:
    """Run tests/support/import_first.py (a fork server: each name imported first in a
    child where no module of `package` is loaded) the way `python -c` runs code: the
    working folder first on sys.path."""
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_FIRST.read_text("utf-8"), package, *names],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=cwd,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [tuple(pair) for pair in json.loads(proc.stdout)]


@pytest.mark.slow
def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    """The runtime check of the same property: whichever module a process imports
    first, no partially initialized module is asked for a name. Each module is imported
    in a process of its own forked from a server that holds only third-party libraries."""
    names = sorted(n for n in import_graph("causal_gym").nodes if not n.endswith("__main__"))
    assert len(names) > 100
    bad = modules_failing_when_imported_first("causal_gym", names, ROOT)
    assert bad == [], bad


def test_the_fork_server_finds_a_circle_that_only_breaks_from_one_end(tmp_path: Path) -> None:
    """The checker itself: a package whose circle holds when `pkg.a` is imported first
    but raises when `pkg.b` is, plus a module that fails on its own."""
    package = tmp_path / "circlepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import json\nVALUE = 1\nfrom circlepkg.b import OTHER\n")
    (package / "b.py").write_text("from circlepkg.a import VALUE\nOTHER = VALUE + 1\n")
    (package / "c.py").write_text("import circlepkg.a\nraise RuntimeError('broken c')\n")
    (package / "d.py").write_text("import circlepkg.a\n")
    names = ["circlepkg", "circlepkg.a", "circlepkg.b", "circlepkg.c", "circlepkg.d"]
    bad = dict(modules_failing_when_imported_first("circlepkg", names, tmp_path))
    assert sorted(bad) == ["circlepkg.b", "circlepkg.c"], bad
    assert "partially initialized module" in bad["circlepkg.b"], bad
    assert bad["circlepkg.c"] == "RuntimeError: broken c", bad
