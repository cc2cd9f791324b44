"""Every table of numbers in the docs, generated from the committed JSON it reports.

A page marks a generated table with two comments around it:

    <!-- table: audit-seed-honest -->

    | ... |

    <!-- /table -->

and this script rewrites what stands between them from the table's source (the audit
reports in causal_gym/, docs/baselines/*/baselines.json, docs/demo/demo.json,
docs/audits/*.json, docs/benchmarks/*.json). So a number in a table is never typed by hand, and
tests/test_docs.py fails when a page's table differs from its source.

    .venv/bin/python scripts/docs_tables.py            # rewrite the pages' tables
    .venv/bin/python scripts/docs_tables.py --check    # exit 1 naming every stale table
"""

from __future__ import annotations

import json
import math
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


def _se(sd: float, n: int) -> float:
    return sd / math.sqrt(n) if n else math.nan


# --- baselines -------------------------------------------------------------------
def baselines(split: str) -> Callable[[], list[str]]:
    def table() -> list[str]:
        from orchestrator.run.baselines import render_table
        from orchestrator.run.summary import RunSummary

        agents = _json(f"docs/baselines/{split}/baselines.json")["agents"]
        summaries = [RunSummary.model_validate(a) for a in agents]
        return render_table(summaries).rstrip("\n").split("\n")

    return table


# --- the seed audit (causal_gym/audit_report.json) --------------------------------
def _seed() -> Any:
    from causal_gym.audit.report import AuditReport

    return AuditReport.model_validate_json((ROOT / "causal_gym/audit_report.json").read_text())


def audit_seed_honest() -> list[str]:
    report = _seed()
    labels = [k.label for k in report.keys]
    rows = [
        "| family | honest reward | coverage (pooled; per key) | AIPW reward | AIPW coverage |",
        "| --- | ---: | --- | ---: | ---: |",
    ]
    for family, h in report.honest.items():
        if "/" in family:
            continue
        per_key = ", ".join(
            f"{report.honest[f'{family}/{label}'].coverage:.4f}"
            for label in labels
            if f"{family}/{label}" in report.honest
        )
        coverage = f"{h.coverage:.4f}; {per_key}" if per_key else f"{h.coverage:.4f}"
        third = report.third_party.get(family)
        aipw = f"{third.reward.mean:.4f} | {third.coverage:.4f}" if third else " | "
        name = f"all {h.n:,}" if family == "overall" else family
        rows.append(f"| {name} | {h.mean_reward:.4f} | {coverage} | {aipw} |")
    return rows


SEED_PROBES = {
    "reference_halved_interval": "reference with a halved interval",
    "diff_in_means": "difference in means (no adjustment, empty set)",
    "post_treatment_adjustment": "adjusting for post-treatment columns too",
    "constant_zero_huge_interval": "constant 0 with an interval of +-10 scales",
}


def audit_seed_probes() -> list[str]:
    report = _seed()
    overall = report.honest["overall"]
    rows = [
        f"| probe (mean reward over {overall.n:,} tasks) | reward | minus honest "
        "| beats honest on |",
        "| --- | ---: | ---: | ---: |",
        f"| honest reference | {overall.mean_reward:.4f} | | |",
    ]
    for name, label in SEED_PROBES.items():
        gap = report.hack_probes[name].by_group["overall"]
        share = report.hack_probes[name].share_of_tasks_beating_honest
        rows.append(f"| {label} | {gap.mean:.4f} | {gap.diff_mean:+.4f} | {share:.1%} of tasks |")
    return rows


def audit_seed_knowledge() -> list[str]:
    from causal_gym.audit.knowledge import knowledge_table

    report = _seed()
    return knowledge_table(report.bayes_prior, report.leakage, report.efficient_ols)


# --- the multi-estimand audit (causal_gym/audit_report_v2.json) --------------------
def _v2() -> Any:
    from causal_gym.audit.estimand_report import EstimandAuditReport

    path = ROOT / "causal_gym/audit_report_v2.json"
    return EstimandAuditReport.model_validate_json(path.read_text())


def audit_v2_families() -> list[str]:
    report = _v2()
    rows = [
        "| family | tasks | honest reward | coverage per tested estimand | every interval "
        "pooled | Brier skill |",
        "| --- | ---: | ---: | --- | ---: | ---: |",
    ]
    for family, s in report.families.items():
        tested = ", ".join(
            f"{name.replace('_', ' ')} {c.coverage:.3f}"
            for name, c in s.coverage.items()
            if name != "all_estimands"
        )
        pooled = s.coverage["all_estimands"]
        skill = "" if s.mean_brier_skill is None else f"{s.mean_brier_skill:.4f}"
        rows.append(
            f"| {family} | {s.n:,} | {s.mean_reward:.4f} | {tested} | "
            f"{pooled.coverage:.3f} of {pooled.n:,} | {skill} |"
        )
    return rows


V2_PROBES = {
    "pooled_for_every_level": "pooled ATE reported for every level",
    "per_level_difference_in_means": "per-level difference in means",
    "total_as_direct": "total effect reported as direct, no indirect effect",
    "mediator_as_confounder": "mediator adjusted for as if a confounder",
    "observational_only": "the extract's adjusted estimate, never biased",
    "trial_only": "the trial alone, prior probability",
    "always_biased": 'the trial alone, always "biased"',
    "reference_halved_interval": "reference with every interval halved",
    "constant_zero_huge_interval": "constant 0 with intervals 10 scales wide",
}


def audit_v2_probes() -> list[str]:
    report = _v2()
    rows = ["| family | probe | reward | minus honest |", "| --- | --- | ---: | ---: |"]
    for family, probes in report.hack_probes.items():
        for name, gap in probes.items():
            label = V2_PROBES.get(name, name)
            rows.append(f"| {family} | {label} | {gap.mean:.4f} | {gap.diff_mean:+.4f} |")
    return rows


def audit_v2_knowledge() -> list[str]:
    from causal_gym.audit.knowledge import knowledge_table

    report = _v2()
    leaks = {f: c.metadata for f, c in report.confounding.items()}
    return knowledge_table(report.bayes_prior, leaks, {})


# --- the expert audit (causal_gym/audit_report_expert.json) -----------------------
def _expert() -> Any:
    from causal_gym.audit.expert_report import ExpertAuditReport

    path = ROOT / "causal_gym/audit_report_expert.json"
    return ExpertAuditReport.model_validate_json(path.read_text())


def audit_expert_families() -> list[str]:
    report = _expert()
    rows = [
        "| family | tasks | honest reward | honest coverage | honest width / r | "
        "linear OLS reward | linear OLS coverage |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for family, s in report.families.items():
        rows.append(
            f"| {family} | {s.n} | {s.mean_reward:.4f} | {s.coverage:.3f} | "
            f"{s.mean_width_ratio:.3f} | {report.hack_probes[family]['linear_ols'].mean:.4f} | "
            f"{s.linear_coverage:.3f} |"
        )
    return rows


EXPERT_PROBES = {
    "linear_ols": "linear OLS on the declared set",
    "diff_in_means": "difference in means",
    "post_treatment_adjustment": "adjusting for post-treatment columns too",
    "constant_zero_huge_interval": "constant 0 with intervals 10 scales wide",
    "reference_halved_interval": "the flexible reference with every interval halved",
}


def audit_expert_probes() -> list[str]:
    report = _expert()
    families = list(report.families)
    rows = [
        f"| probe (minus honest, per task) | {' | '.join(families)} |",
        "| --- |" + " ---: |" * len(families),
    ]
    for name, label in EXPERT_PROBES.items():
        cells = " | ".join(f"{report.hack_probes[f][name].diff_mean:+.4f}" for f in families)
        rows.append(f"| {label} | {cells} |")
    return rows


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
    "audit-seed-honest": audit_seed_honest,
    "audit-seed-probes": audit_seed_probes,
    "audit-seed-knowledge": audit_seed_knowledge,
    "audit-v2-families": audit_v2_families,
    "audit-v2-probes": audit_v2_probes,
    "audit-v2-knowledge": audit_v2_knowledge,
    "audit-expert-families": audit_expert_families,
    "audit-expert-probes": audit_expert_probes,
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
