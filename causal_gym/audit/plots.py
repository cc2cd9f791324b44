"""PNG plots beside the audit numbers: the width sweep, coverage by family and the
reward distributions of honest answers and hack probes."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.policies import HACK_PROBES
from causal_gym.audit.report import COVERAGE_BAND, AuditReport
from causal_gym.audit.runner import TaskAudit


def plot_width_sweep(report: AuditReport, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for family, sweep in report.width_sweep.items():
        style = {"linewidth": 2.5, "color": "black"} if family == "overall" else {"alpha": 0.8}
        ax.plot(sweep.levels, sweep.mean_estimand_reward, marker="o", label=family, **style)
    ax.axvline(0.90, linestyle="--", color="grey")
    ax.set_xlabel("nominal interval level (reference estimate, rescaled SE)")
    ax.set_ylabel("mean estimand reward")
    ax.set_title("Width sweep: expected reward peaks at the 90% interval")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_coverage(report: AuditReport, path: Path) -> None:
    families = list(report.honest)
    values = [report.honest[f].coverage for f in families]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(families, values, color=["#4c72b0"] * (len(families) - 1) + ["#333333"])
    ax.axhspan(*COVERAGE_BAND, color="green", alpha=0.15, label="target band")
    ax.axhline(0.90, color="green", linestyle="--")
    for i, v in enumerate(values):
        ax.text(i, v + 0.003, f"{v:.3f}", ha="center")
    ax.set_ylim(0.80, 1.0)
    ax.set_ylabel("honest 90% interval coverage")
    ax.set_title("Coverage of the honest reference by family")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rewards(rows: list[TaskAudit], path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    families = sorted({r.family for r in rows})
    bins = np.linspace(-1.0, 1.0, 41)
    for family in families:
        values = [max(-1.0, r.honest.reward) for r in rows if r.family == family]
        left.hist(values, bins=bins, alpha=0.5, label=family)
    left.set_xlabel("honest reward (clipped at -1 for display)")
    left.set_ylabel("tasks")
    left.set_title("Honest reward by family")
    left.legend()
    names = ["honest", *HACK_PROBES]
    data = [[max(-1.0, r.honest.reward) for r in rows]]
    data += [[max(-1.0, r.probes[name]) for r in rows] for name in HACK_PROBES]
    right.boxplot(data, showfliers=False)
    right.set_xticks(range(1, len(names) + 1), [n.replace("_", "\n") for n in names], fontsize=7)
    right.set_ylabel("reward (clipped at -1 for display)")
    right.set_title("Honest answers versus hack probes")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_plots(report: AuditReport, rows: list[TaskAudit], report_path: Path) -> list[Path]:
    stem = report_path.with_suffix("")
    paths = [
        Path(f"{stem}_width_sweep.png"),
        Path(f"{stem}_coverage.png"),
        Path(f"{stem}_rewards.png"),
    ]
    plot_width_sweep(report, paths[0])
    plot_coverage(report, paths[1])
    plot_rewards(rows, paths[2])
    return paths
