"""The expert suite's plots: honest (flexible) versus linear OLS coverage per family
(the width sweep and the reward boxes are plots.py's)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.expert.report import LINEAR_COVERAGE_LIMIT, ExpertReport
from causal_gym.audit.expert.rows import ExpertRow
from causal_gym.audit.plots import (
    acceptance_whisker,
    plot_rewards_by_family,
    plot_width_sweep,
    save,
    write_plots,
)


def plot_coverage(report: ExpertReport, path: Path) -> None:
    """Honest (flexible) and linear OLS coverage per family; whiskers: the honest
    coverage's acceptance region; dotted: the limit linear OLS must fall below."""
    families = list(report.families)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for i, family in enumerate(families):
        s = report.families[family]
        ax.bar(i - 0.2, s.coverage, 0.38, color="C0", label="flexible AIPW" if i == 0 else None)
        ax.bar(i + 0.2, s.linear_coverage, 0.38, color="C3", label="linear OLS" if i == 0 else None)
        acceptance_whisker(ax, i - 0.2, s.n, report.per_check_alpha)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.axhline(LINEAR_COVERAGE_LIMIT, color="C3", linestyle=":")
    ax.set_xticks(np.arange(len(families)), families)
    ax.set_ylim(0.0, 1.15)
    ax.set_ylabel("share of 90% intervals covering the true ATE")
    ax.set_title("Expert tier: coverage of the flexible reference and of linear OLS")
    ax.legend(loc="upper center", ncol=2)
    save(fig, path)


def write(report: ExpertReport, rows: list[ExpertRow], report_path: Path) -> list[Path]:
    title = "Expert tier: the flexible reference versus linear OLS and the probes"
    return write_plots(
        report_path,
        {
            "width_sweep": partial(plot_width_sweep, report, title="Width sweep, expert tier"),
            "coverage": partial(plot_coverage, report),
            "rewards": partial(plot_rewards_by_family, report, rows, title=title),
        },
        report,
    )
