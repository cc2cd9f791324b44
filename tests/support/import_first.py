"""Import each named module first, in a process where no module of its package is loaded.

    python tests/support/import_first.py PACKAGE NAME [NAME ...]

Prints a JSON list of [name, last line of the error] for every NAME whose import failed.

A fork server, so a hundred modules do not each pay for a fresh interpreter and the
third-party libraries under them (verifiers alone takes 4-5 s to import):

1. This process imports, once, every module outside PACKAGE that PACKAGE's sources
   import where the import runs when a module is loaded (not in a function body), read
   from the files without importing PACKAGE. It then checks that none of them pulled a
   module of PACKAGE in (an entry point, a plugin scan).
2. One child per NAME is forked from it; the child checks again that no module of
   PACKAGE is loaded, imports NAME, and reports the error if the import raised.

What the check is about stays the same as with `python -c "import NAME"`: the first
module of PACKAGE a process imports is NAME, so an import circle inside PACKAGE that
only holds in some orders raises in the child that starts it from the wrong end.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path


def loaded(package: str) -> list[str]:
    return [n for n in sys.modules if n == package or n.startswith(package + ".")]


def in_child(work: object) -> tuple[int, bytes]:
    """Fork; the child runs `work()` and writes what it returns (bytes) to a pipe.
    Returns the child's exit status and what it wrote."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        os.close(read_end)
        status = 0
        try:
            payload = work()  # type: ignore[operator]
        except BaseException:  # a failed import is the report
            lines = traceback.format_exc().strip().splitlines()
            payload = (lines[-1] if lines else "no traceback").encode()
            status = 1
        try:
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        payload = inp.read()
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status), payload


def third_party_imports(package: str) -> list[str]:
    """Absolute imports outside `package` that run when its modules load: every import
    statement in its sources that is not inside a function body (a deferred import
    runs later, if ever). `from x import y` names both x and x.y (y may be a module)."""
    spec = importlib.util.find_spec(package)  # finds the folder, runs nothing
    assert spec is not None and spec.submodule_search_locations, package
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                names.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                names.add(child.module)
                names.update(f"{child.module}.{alias.name}" for alias in child.names)
            visit(child)

    for folder in spec.submodule_search_locations:
        for path in sorted(Path(folder).rglob("*.py")):
            visit(ast.parse(path.read_text("utf-8")))
    return sorted(n for n in names if n.split(".")[0] != package)


def main(package: str, names: list[str]) -> list[tuple[str, str]]:
    assert not loaded(package), f"the server started with {loaded(package)} loaded"
    for name in third_party_imports(package):
        # a name imported from a module is no module; a staged script's sibling is not here
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    assert not loaded(package), f"third-party imports loaded {loaded(package)}"

    bad: list[tuple[str, str]] = []
    for name in names:

        def import_first(name: str = name) -> bytes:
            already = loaded(package)
            if already:
                raise AssertionError(f"{already} loaded before {name}")
            importlib.import_module(name)
            return b""

        status, payload = in_child(import_first)
        if status:
            bad.append((name, payload.decode(errors="replace") or f"exit {status}"))
    return bad


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2:])))
