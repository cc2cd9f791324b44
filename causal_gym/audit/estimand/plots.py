"""The estimand suite's plots: honest coverage per estimand with the tested ones'
acceptance regions (the width sweep and the reward boxes are plots.py's)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.estimand.report import EstimandReport
from causal_gym.audit.estimand.rows import EstimandRow
from causal_gym.audit.plots import (
    acceptance_whisker,
    plot_rewards_by_family,
    plot_width_sweep,
    save,
    write_plots,
)


def plot_coverage(report: EstimandReport, path: Path) -> None:
    """Honest coverage per estimand; whiskers: the tested ones' acceptance regions."""
    bars = [
        (f"{family}\n{name}", c, name != "all_estimands")
        for family, summary in report.families.items()
        for name, c in summary.coverage.items()
    ]
    fig, ax = plt.subplots(figsize=(max(7, 1.1 * len(bars)), 4.2))
    for i, (_label, c, tested) in enumerate(bars):
        ax.bar(i, c.coverage, 0.7, color="C0" if tested else "C7")
        if tested:
            acceptance_whisker(ax, i, c.n, report.per_check_alpha)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.set_ylim(0.75, 1.0)
    ax.set_ylabel("honest 90% interval coverage")
    ax.set_title("Coverage per estimand (grey: every interval pooled, not tested)")
    save(fig, path)


def write(report: EstimandReport, rows: list[EstimandRow], report_path: Path) -> list[Path]:
    return write_plots(
        report_path,
        {
            "width_sweep": partial(
                plot_width_sweep, report, title="Width sweep, multi-estimand families"
            ),
            "coverage": partial(plot_coverage, report),
            "rewards": partial(
                plot_rewards_by_family, report, rows, title="Honest answers versus hack probes"
            ),
        },
        report,
    )
