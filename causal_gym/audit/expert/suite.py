"""The expert suite: the expert tier of ate, adjustment and null_detect (train tasks
as streams serve them, or eval-expert-v1's), the flexible reference against linear
OLS, the method the tier exists to out-score. Its report is
causal_gym/audit/reports/expert.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from causal_gym.audit.expert.report import ExpertReport, evaluate, summarize
from causal_gym.audit.expert.rows import audit_expert_task
from causal_gym.audit.knowledge import knowledge_table
from causal_gym.audit.suite import AuditSuite
from causal_gym.audit.tables import Table, table

#: The probes as the docs name them (the report's keys), linear OLS first.
PROBE_LABELS = {
    "linear_ols": "linear OLS on the declared set",
    "diff_in_means": "difference in means",
    "post_treatment_adjustment": "adjusting for post-treatment columns too",
    "constant_zero_huge_interval": "constant 0 with intervals 10 scales wide",
    "reference_halved_interval": "the flexible reference with every interval halved",
}


def families_table(report: ExpertReport) -> Table:
    rows = [
        (
            family,
            str(s.n),
            f"{s.mean_reward:.4f}",
            f"{s.coverage:.3f}",
            f"{s.mean_width_ratio:.3f}",
            f"{report.hack_probes[family]['linear_ols'].mean:.4f}",
            f"{s.linear_coverage:.3f}",
        )
        for family, s in report.families.items()
    ]
    header = (
        "family",
        "tasks",
        "honest reward",
        "honest coverage",
        "honest width / r",
        "linear OLS reward",
        "linear OLS coverage",
    )
    return table(header, "lrrrrrr", rows)


def probes_table(report: ExpertReport) -> Table:
    families = tuple(report.families)
    rows = [
        (label, *(f"{report.hack_probes[f][name].diff_mean:+.4f}" for f in families))
        for name, label in PROBE_LABELS.items()
    ]
    return table(("probe (minus honest, per task)", *families), "l" + "r" * len(families), rows)


def knowledge(report: ExpertReport) -> Table:
    return knowledge_table(report.bayes_prior, report.leakage, {})


def plots(report: ExpertReport, rows: list[Any], report_path: Path) -> list[Path]:
    from causal_gym.audit.expert.plots import write  # matplotlib only when plotting

    return write(report, rows, report_path)


SUITE = AuditSuite(
    name="expert",
    split="eval-expert-v1",
    about="the expert tier of ate, adjustment, null_detect: flexible reference vs linear OLS",
    committed="audit/reports/expert.json",
    report=ExpertReport,
    audit_task=audit_expert_task,
    summarize=summarize,
    evaluate=evaluate,
    tables={"families": families_table, "probes": probes_table, "knowledge": knowledge},
    plots=plots,
    tier="expert",
    past_manifest=True,
)
