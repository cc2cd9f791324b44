"""mkdocs hook: repository files the pages show or link (plots, committed JSON, the
changelog) are served under `repo/<path>` from where they live, so nothing is copied
into the pages folder and every link is checked by `mkdocs build --strict`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
#: Repository files the site serves, as globs relative to the repository root.
SERVED = (
    "CHANGELOG.md",
    "causal_gym/audit/reports/*.json",
    "causal_gym/audit/reports/*.png",
    "docs/audits/*",
    "docs/baselines/*/*",
    "docs/baselines/*/logs/*.eval",
    "docs/benchmarks/*",
    "docs/demo/*",
    "docs/demo/attempts/*",
    "docs/demo/analyst/*",
    "docs/real/*",
    "docs/images/*",
    "docs/stream-openapi-v1.json",
    "configs/kuberay/*",
    "orchestrator/sandbox/analyst.Dockerfile",
)


def on_files(files: Files, config: Any) -> Files:
    for pattern in SERVED:
        for path in sorted(ROOT.glob(pattern)):
            # the data folders' own .md files are tables the pages embed (docs_tables.py)
            if path.is_file() and (path.suffix != ".md" or path.name == "CHANGELOG.md"):
                uri = "repo/" + path.relative_to(ROOT).as_posix()
                files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files
