"""The seed suite: eval-v1's families (ate, adjustment, null_detect) under several
keys, answered honestly, at every interval level, by the hack probes, by a third-party
AIPW analyst, by the bayes-prior probe and by a more efficient OLS analyst. Its
report is causal_gym/audit/reports/seed.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from causal_gym.audit.knowledge import knowledge_table
from causal_gym.audit.report import SuiteReport
from causal_gym.audit.seed.report import SeedReport, evaluate, summarize
from causal_gym.audit.seed.rows import audit_task
from causal_gym.audit.slices import slices_table
from causal_gym.audit.suite import AuditSuite
from causal_gym.audit.tables import Table, table

#: The hack probes as the docs name them (the report's keys).
PROBE_LABELS = {
    "reference_halved_interval": "reference with a halved interval",
    "diff_in_means": "difference in means (no adjustment, empty set)",
    "post_treatment_adjustment": "adjusting for post-treatment columns too",
    "constant_zero_huge_interval": "constant 0 with an interval of +-10 scales",
}


def honest_table(report: SeedReport) -> Table:
    labels = [k.label for k in report.keys]
    rows = []
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
        aipw = (f"{third.reward.mean:.4f}", f"{third.coverage:.4f}") if third else ("", "")
        name = f"all {h.n:,}" if family == "overall" else family
        rows.append((name, f"{h.mean_reward:.4f}", coverage, *aipw))
    header = (
        "family",
        "honest reward",
        "coverage (pooled; per key)",
        "AIPW reward",
        "AIPW coverage",
    )
    return table(header, "lrlrr", rows)


def probes_table(report: SeedReport) -> Table:
    overall = report.honest["overall"]
    rows = [("honest reference", f"{overall.mean_reward:.4f}", "", "")]
    for name, label in PROBE_LABELS.items():
        gap = report.hack_probes[name].by_group["overall"]
        share = report.hack_probes[name].share_of_tasks_beating_honest
        rows.append((label, f"{gap.mean:.4f}", f"{gap.diff_mean:+.4f}", f"{share:.1%} of tasks"))
    header = (
        f"probe (mean reward over {overall.n:,} tasks)",
        "reward",
        "minus honest",
        "beats honest on",
    )
    return table(header, "lrrr", rows)


def knowledge(report: SeedReport) -> Table:
    return knowledge_table(report.bayes_prior, report.leakage, report.efficient_ols)


def slices(report: SuiteReport) -> Table:
    return slices_table(report.slices)


def plots(report: SeedReport, rows: list[Any], report_path: Path) -> list[Path]:
    from causal_gym.audit.seed.plots import write  # matplotlib only when plotting

    return write(report, rows, report_path)


SUITE = AuditSuite(
    name="seed",
    split="eval-v1",
    about="ate, adjustment, null_detect: honest answers, hack probes, a third-party analyst",
    committed="audit/reports/seed.json",
    report=SeedReport,
    audit_task=audit_task,
    summarize=summarize,
    evaluate=evaluate,
    tables={
        "honest": honest_table,
        "probes": probes_table,
        "knowledge": knowledge,
        "slices": slices,
    },
    plots=plots,
)
