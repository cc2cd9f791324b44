"""Frozen public splits as Harbor task folders (`causal-gym export harbor`).

Harbor (the successor of Terminal-Bench) reads a task as a folder: `task.toml`,
`instruction.md`, `environment/` (the agent's image), `solution/solve.sh` (what its
oracle agent runs) and `tests/` (the verifier). This package writes those folders:

    layout.py        the paths and names every part agrees on (the answer file, labels)
    task_folder.py   one task's folder, file by file, from the task and its manifest entry
    export.py        a split's folders, their digests and `dataset.toml`, written whole
    verify.py        the verifier Harbor runs in its own environment (`tests/test.sh`):
                     the project's schema and scorer, a finite reward on every path

The agent's environment holds the staged files and the analyst toolchain, never the
generator, the key or a truth; the verifier runs separately (Harbor's separate mode)
and regenerates the task from its id under the public key, so a truth is never
written into a task folder at all.
"""
