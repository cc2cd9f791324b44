"""The docs: a short README with exactly the two fresh-machine commands, a site that
builds strictly, and tables of numbers that equal the committed JSON they report."""

from __future__ import annotations

import re
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


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs-material, every link and anchor checked (docs/mkdocs.yml is strict)."""
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "-q",
         "-f", str(ROOT / "docs" / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    for page in ("tasks", "audits", "baselines", "runs"):
        assert "<table>" in (tmp_path / "site" / page / "index.html").read_text()
