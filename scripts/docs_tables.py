"""Every table of numbers in the docs, generated from the committed JSON it reports.

A page marks a generated table with two comments around it:

    <!-- table: audit-seed-honest -->

    | ... |

    <!-- /table -->

and this script rewrites what stands between them from the table's source (the audit
reports in causal_gym/, drawn by each audit suite's tables; docs/baselines/*/baselines.json,
docs/demo/demo.json, docs/audits/*.json, docs/benchmarks/*.json). So a number in a
table is never typed by hand, and tests/test_docs.py fails when a page's table differs
from its source.

    .venv/bin/python scripts/docs_tables.py            # rewrite the pages' tables
    .venv/bin/python scripts/docs_tables.py --check    # exit 1 naming every stale table
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "pages"
MARKER = re.compile(r"(<!-- table: ([a-z0-9-]+) -->\n)(.*?)(<!-- /table -->)", re.DOTALL)


def _json(path: str) -> Any:
    return json.loads((ROOT / path).read_text("utf-8"))


# --- baselines -------------------------------------------------------------------
def baselines(split: str) -> Callable[[], list[str]]:
    def table() -> list[str]:
        from orchestrator.run.baselines import render_table
        from orchestrator.run.summary import RunSummary

        agents = _json(f"docs/baselines/{split}/baselines.json")["agents"]
        summaries = [RunSummary.model_validate(a) for a in agents]
        return render_table(summaries).rstrip("\n").split("\n")

    return table


# --- the audits: every suite's tables of its committed report (causal_gym/audit/) ---
def audit(suite_name: str, table_name: str) -> Callable[[], list[str]]:
    def table() -> list[str]:
        from causal_gym.audit.suite import suite

        chosen = suite(suite_name)
        return chosen.tables[table_name](chosen.load_committed()).markdown()

    return table


def audit_tables() -> dict[str, Callable[[], list[str]]]:
    """audit-<suite>-<table> for every table of every suite."""
    from causal_gym.audit.suite import suite, suite_names

    return {
        f"audit-{name}-{table}": audit(name, table)
        for name in suite_names()
        for table in suite(name).tables
    }


# --- the reference on the frozen eval-v1 split (docs/audits/eval_v1_reference.json) -----
def eval_v1_reference() -> list[str]:
    rows = [
        "| family | tasks | reference coverage | exact 95% interval | mean reward |",
        "| --- | ---: | ---: | --- | ---: |",
    ]
    for family, f in _json("docs/audits/eval_v1_reference.json")["families"].items():
        low, high = f["interval"]
        rows.append(
            f"| {family} | {f['tasks']} | {f['coverage']:.3f} | [{low:.3f}, {high:.3f}] | "
            f"{f['mean_reward']:.4f} |"
        )
    return rows


# --- the SmolLM2 demo (docs/demo/demo.json) ---------------------------------------
def demo() -> list[str]:
    rows = [
        "| model | tasks | valid share | mean clipped reward |",
        "| --- | ---: | ---: | ---: |",
    ]
    for e in _json("docs/demo/demo.json")["evaluations"]:
        if e["valid_share"] == 0.0:  # no SE from zero successes: the exact bound
            bound = 1.0 - 0.025 ** (1.0 / e["tasks"])  # the two-sided 95% interval
            valid = f"0.000 (0 of {e['tasks']}; 95% upper bound {bound:.2f})"
        else:
            valid = f"{e['valid_share']:.3f} ± {e['valid_share_se']:.3f}"
        reward = f"{e['mean_clipped_reward']:.3f}"
        if e["mean_clipped_reward_se"]:
            reward += f" ± {e['mean_clipped_reward_se']:.3f}"
        rows.append(f"| {e['model']} | {e['tasks']} | {valid} | {reward} |")
    return rows


TABLES: dict[str, Callable[[], list[str]]] = {
    "baselines-eval-v1": baselines("eval-v1"),
    "baselines-eval-v1-demo": baselines("eval-v1-demo"),
    "baselines-eval-v2": baselines("eval-v2"),
    "baselines-eval-expert-v1": baselines("eval-expert-v1"),
    **audit_tables(),
    "demo": demo,
    "eval-v1-reference": eval_v1_reference,
}


def render(text: str, where: str = "") -> tuple[str, list[str]]:
    """The page with every marked table regenerated, and the names of the tables that
    changed; an unknown table name is an error."""
    changed: list[str] = []

    def replace(match: re.Match[str]) -> str:
        opening, name, old, closing = match.groups()
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r} (known: {', '.join(TABLES)})")
        # blank lines around the table: Markdown ends an HTML comment's block there
        new = "\n" + "\n".join(TABLES[name]()) + "\n\n"
        if new != old:
            changed.append(name)
        return opening + new + closing

    return MARKER.sub(replace, text), changed


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python scripts/docs_tables.py [--check]", file=sys.stderr)
        return 2
    stale = []
    for page in sorted(PAGES.glob("*.md")):
        text = page.read_text("utf-8")
        new, changed = render(text, page.name)
        stale += [f"{page.relative_to(ROOT)}: {name}" for name in changed]
        if changed and not check:
            page.write_text(new, "utf-8")
    for line in stale:
        print(("stale " if check else "rewrote ") + line)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
