"""The design suite's plots: the reference's and each probe's coverage by hidden
subtier, where theory says each probe fails (the width sweep and the reward boxes are
plots.py's)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.design.report import DesignReport
from causal_gym.audit.design.rows import DesignRow
from causal_gym.audit.plots import plot_rewards_by_family, plot_width_sweep, save, write_plots


def plot_coverage(report: DesignReport, path: Path) -> None:
    """Per family and hidden subtier, the reference's coverage beside each probe's."""
    fig, axes = plt.subplots(1, len(report.subtiers), figsize=(5.2 * len(report.subtiers), 5.2))
    axes_list = list(getattr(axes, "flat", [axes]))
    for ax, (family, cells) in zip(axes_list, report.subtiers.items(), strict=True):
        names = list(next(iter(cells.values())).probe_coverage)
        width = 0.8 / (len(names) + 1)
        for i, c in enumerate(cells.values()):
            values = [c.coverage, *(c.probe_coverage[n] for n in names)]
            for j, value in enumerate(values):
                ax.bar(i + (j - len(names) / 2) * width, value, width, color=f"C{j}")
        ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
        ticks = [s.replace("_", "\n") for s in cells]  # three short lines: 7 fit side by side
        ax.set_xticks(range(len(cells)), ticks, fontsize=7)
        ax.set_ylim(0.0, 1.02)
        ax.set_title(family)
        ax.legend(
            ["90%", "reference", *names],
            fontsize=7,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.2),
            ncol=3,
            frameon=False,
        )
    axes_list[0].set_ylabel("coverage of the 90% interval")
    fig.suptitle("Coverage by hidden subtier: the reference against each naive analysis")
    save(fig, path)


def write(report: DesignReport, rows: list[DesignRow], report_path: Path) -> list[Path]:
    return write_plots(
        report_path,
        {
            "width_sweep": partial(plot_width_sweep, report, title="Width sweep, design families"),
            "coverage": partial(plot_coverage, report),
            "rewards": partial(
                plot_rewards_by_family, report, rows, title="The reference versus each probe"
            ),
        },
        report,
    )
