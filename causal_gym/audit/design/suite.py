"""The design suite: eval-v3's families (iv, did, rdd). The reference's coverage and
reward, the width sweep, every probe the family's contract names (each must score
below the reference), the generator-aware probe's gain, and whether staged metadata
tells a hidden subtier. Its report is causal_gym/audit/reports/design.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from causal_gym.audit.design.report import DesignReport, evaluate, summarize
from causal_gym.audit.design.rows import audit_design_task
from causal_gym.audit.knowledge import knowledge_table
from causal_gym.audit.report import SuiteReport
from causal_gym.audit.slices import slices_table
from causal_gym.audit.suite import AuditSuite
from causal_gym.audit.tables import Table, table
from causal_gym.plan.tiers import Tier


def families_table(report: DesignReport) -> Table:
    rows = []
    for family, s in report.families.items():
        cells = report.tiers[family]
        tiers = ", ".join(f"{t} {cells[t].coverage:.3f}" for t in Tier if t in cells)
        rows.append(
            (
                family,
                f"{s.n:,}",
                f"{s.mean_reward:.4f}",
                f"{s.coverage:.3f}",
                tiers,
                f"{s.mean_width_ratio:.2f}",
            )
        )
    header = ("family", "tasks", "reference reward", "coverage", "per tier", "width / r")
    return table(header, "lrrrlr", rows)


def probes_table(report: DesignReport) -> Table:
    rows = [
        (family, name, f"{gap.mean:.4f}", f"{gap.diff_mean:+.4f}")
        for family, probes in report.hack_probes.items()
        for name, gap in probes.items()
    ]
    return table(("family", "probe", "reward", "minus reference"), "llrr", rows)


def subtiers_table(report: DesignReport) -> Table:
    rows = []
    for family, cells in report.subtiers.items():
        for subtier, c in cells.items():
            probes = ", ".join(
                f"{n} {c.probe_reward[n]:+.3f} ({c.probe_coverage[n]:.2f})" for n in c.probe_reward
            )
            rows.append(
                (family, subtier, f"{c.n:,}", f"{c.mean_reward:+.3f} ({c.coverage:.2f})", probes)
            )
    header = ("family", "hidden subtier", "tasks", "reference (coverage)", "probes (coverage)")
    return table(header, "llrrl", rows)


def knowledge(report: DesignReport) -> Table:
    return knowledge_table(report.bayes_prior, report.leakage, {})


def slices(report: SuiteReport) -> Table:
    return slices_table(report.slices)


def plots(report: DesignReport, rows: list[Any], report_path: Path) -> list[Path]:
    from causal_gym.audit.design.plots import write  # matplotlib only when plotting

    return write(report, rows, report_path)


SUITE = AuditSuite(
    name="design",
    split="eval-v3",
    about="iv, did, rdd: coverage, each design's naive analyses, hidden subtiers",
    committed="audit/reports/design.json",
    report=DesignReport,
    audit_task=audit_design_task,
    summarize=summarize,
    evaluate=evaluate,
    tables={
        "families": families_table,
        "probes": probes_table,
        "subtiers": subtiers_table,
        "knowledge": knowledge,
        "slices": slices,
    },
    plots=plots,
)
