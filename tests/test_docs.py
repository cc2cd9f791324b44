"""The docs: a short README with exactly the two fresh-machine commands, a site that
builds strictly, and tables of numbers that equal the committed JSON they report."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import docs_tables

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_is_short_and_holds_exactly_the_two_commands() -> None:
    text = README.read_text("utf-8")
    assert len(text.encode()) <= 12 * 1024
    markers = re.findall(r"<!-- ([a-z-]+) -->\n```sh\n(.*)\n```", text)
    main = "bash scripts/bootstrap.sh && .venv/bin/causal-gym-run --config configs/smoke.toml"
    test = "bash scripts/bootstrap.sh --test && bash scripts/run_tests.sh"
    assert markers == [("main-command", main), ("test-command", test)]
    for link in re.findall(r"\]\((docs/pages/[a-z-]+\.md)[)#]", text):
        assert (ROOT / link).is_file(), link


@pytest.mark.parametrize("page", sorted(p.name for p in docs_tables.PAGES.glob("*.md")))
def test_every_table_of_numbers_equals_its_committed_source(page: str) -> None:
    text = (docs_tables.PAGES / page).read_text("utf-8")
    _, stale = docs_tables.render(text, page)
    assert not stale, f"{page}: run scripts/docs_tables.py ({stale})"


def test_a_hand_edited_table_is_caught() -> None:
    page = (docs_tables.PAGES / "audits.md").read_text("utf-8")
    edited = page.replace("| ate | 0.8", "| ate | 0.9", 1)
    assert edited != page
    assert docs_tables.render(edited)[1] == ["audit-seed-honest"]
    with pytest.raises(KeyError, match="unknown table"):
        docs_tables.render("<!-- table: nope -->\n\n<!-- /table -->")


def build_site(docs: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` at its default log level: its WARNING lines are what the
    strict mode counts, so no quiet flag may hide them (with -q a site with three broken
    links once passed)."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict",
         "-f", str(docs / "mkdocs.yml"), "-d", str(site)],
        capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
    )  # fmt: skip


def warnings_of(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if "WARNING" in line]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs-material, every link and anchor checked (docs/mkdocs.yml is strict), and
    not one warning printed."""
    proc = build_site(ROOT / "docs", tmp_path / "site")
    assert proc.returncode == 0 and not warnings_of(proc), warnings_of(proc) or proc.stderr[-3000:]
    for page in ("tasks", "audits", "baselines", "runs"):
        assert "<table>" in (tmp_path / "site" / page / "index.html").read_text()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The check above can fail: the same docs with one link to a file that is not
    served abort the strict build, and its warning names the link."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    hooks = docs / "hooks.py"  # it serves this repository's files, not the copy's
    hooks.write_text(hooks.read_text().replace(
        "ROOT = Path(__file__).resolve().parents[1]", f"ROOT = Path({str(ROOT)!r})"
    ))  # fmt: skip
    page = docs / "pages" / "kubernetes.md"
    page.write_text(page.read_text() + "\n[gone](repo/configs/kuberay/no-such.yaml)\n")
    proc = build_site(docs, tmp_path / "site")
    assert proc.returncode != 0
    found = warnings_of(proc)
    assert found and all("no-such.yaml" in line for line in found), proc.stderr[-2000:]
