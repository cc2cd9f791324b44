"""PNG plots beside the multi-estimand audit's numbers: the width sweep, coverage per
estimand and the reward distributions of honest answers and probes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.estimand_audit import EstimandTaskAudit
from causal_gym.audit.estimand_report import EstimandAuditReport
from causal_gym.audit.stats import binomial_acceptance


def plot_width_sweep(
    report: Any, path: Path, title: str = "Width sweep, multi-estimand families"
) -> None:
    """Any audit report with per-family `width_sweep` entries (this one, the expert's)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for family, sweep in report.width_sweep.items():
        means = np.array(sweep.mean_estimand_reward)
        ax.plot(sweep.levels, means, marker="o", label=family)
        half = 2 * np.array(sweep.diff_sd_vs_90) / np.sqrt(sweep.n)
        ax.fill_between(sweep.levels, means - half, means + half, alpha=0.12, color="grey")
    ax.axvline(NOMINAL_COVERAGE, linestyle="--", color="grey")
    ax.set_xlabel("nominal level of every interval (reference estimates, rescaled SEs)")
    ax.set_ylabel("mean estimand reward (band: 2 SE of the gap to 0.90)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_coverage(report: EstimandAuditReport, path: Path) -> None:
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
            lo, hi, _ = binomial_acceptance(c.n, NOMINAL_COVERAGE, report.per_check_alpha)
            ax.plot([i, i], [lo / c.n, hi / c.n], color="black", linewidth=1)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.set_ylim(0.75, 1.0)
    ax.set_ylabel("honest 90% interval coverage")
    ax.set_title("Coverage per estimand (grey: every interval pooled, not tested)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rewards(
    report: Any,
    rows: list[Any],
    path: Path,
    title: str = "Honest answers versus hack probes",
) -> None:
    """Per family, the honest reward beside each probe's (`hack_probes[family]`; rows
    with `family`, `reward` and `probes`)."""
    families = list(report.families)
    fig, axes = plt.subplots(1, len(families), figsize=(4.5 * len(families), 4.2), squeeze=False)
    for ax, family in zip(axes[0], families, strict=True):
        group = [r for r in rows if r.family == family]
        names = ["honest", *report.hack_probes[family]]
        data = [[max(-1.0, r.reward) for r in group]]
        data += [[max(-1.0, r.probes[name]) for r in group] for name in names[1:]]
        ax.boxplot(data, showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), [n.replace("_", "\n") for n in names], fontsize=6)
        ax.set_title(family)
        ax.set_ylabel("reward (clipped at -1 for display)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_estimand_plots(
    report: EstimandAuditReport, rows: list[EstimandTaskAudit], report_path: Path
) -> list[Path]:
    stem = report_path.with_suffix("")
    paths = [Path(f"{stem}_{name}.png") for name in ("width_sweep", "coverage", "rewards")]
    plot_width_sweep(report, paths[0])
    plot_coverage(report, paths[1])
    plot_rewards(report, rows, paths[2])
    return paths
