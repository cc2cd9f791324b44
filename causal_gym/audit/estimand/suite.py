"""The estimand suite: eval-v2's multi-estimand families (cate, mediation,
obs_vs_rct), every estimand's interval tested, each family's own probes run, and
obs_vs_rct's confounding tested as a class nothing but the data should tell. Its
report is causal_gym/audit/reports/estimand.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from causal_gym.audit.estimand.report import EstimandReport, evaluate, summarize
from causal_gym.audit.estimand.rows import audit_estimand_task
from causal_gym.audit.knowledge import knowledge_table
from causal_gym.audit.report import SuiteReport
from causal_gym.audit.slices import slices_table
from causal_gym.audit.suite import AuditSuite
from causal_gym.audit.tables import Table, table

#: The probes as the docs name them (the report's keys).
PROBE_LABELS = {
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


def families_table(report: EstimandReport) -> Table:
    rows = []
    for family, s in report.families.items():
        tested = ", ".join(
            f"{name.replace('_', ' ')} {c.coverage:.3f}"
            for name, c in s.coverage.items()
            if name != "all_estimands"
        )
        pooled = s.coverage["all_estimands"]
        skill = "" if s.mean_brier_skill is None else f"{s.mean_brier_skill:.4f}"
        rows.append(
            (
                family,
                f"{s.n:,}",
                f"{s.mean_reward:.4f}",
                tested,
                f"{pooled.coverage:.3f} of {pooled.n:,}",
                skill,
            )
        )
    header = (
        "family",
        "tasks",
        "honest reward",
        "coverage per tested estimand",
        "every interval pooled",
        "Brier skill",
    )
    return table(header, "lrrlrr", rows)


def probes_table(report: EstimandReport) -> Table:
    rows = [
        (family, PROBE_LABELS.get(name, name), f"{gap.mean:.4f}", f"{gap.diff_mean:+.4f}")
        for family, probes in report.hack_probes.items()
        for name, gap in probes.items()
    ]
    return table(("family", "probe", "reward", "minus honest"), "llrr", rows)


def knowledge(report: EstimandReport) -> Table:
    leaks = {f: c.metadata for f, c in report.confounding.items()}
    return knowledge_table(report.bayes_prior, leaks, {})


def slices(report: SuiteReport) -> Table:
    return slices_table(report.slices)


def plots(report: EstimandReport, rows: list[Any], report_path: Path) -> list[Path]:
    from causal_gym.audit.estimand.plots import write  # matplotlib only when plotting

    return write(report, rows, report_path)


SUITE = AuditSuite(
    name="estimand",
    split="eval-v2",
    about="cate, mediation, obs_vs_rct: every estimand's interval, each family's probes",
    committed="audit/reports/estimand.json",
    report=EstimandReport,
    audit_task=audit_estimand_task,
    summarize=summarize,
    evaluate=evaluate,
    tables={
        "families": families_table,
        "probes": probes_table,
        "knowledge": knowledge,
        "slices": slices,
    },
    plots=plots,
)
