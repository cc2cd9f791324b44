"""PNG plots beside the expert audit's numbers: the width sweep, honest versus linear
OLS coverage, and the reward distributions of the honest answers and the probes."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.expert_audit import ExpertTaskAudit
from causal_gym.audit.expert_report import LINEAR_COVERAGE_LIMIT, ExpertAuditReport
from causal_gym.audit.report import NOMINAL_COVERAGE
from causal_gym.audit.stats import binomial_acceptance


def plot_width_sweep(report: ExpertAuditReport, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for family, sweep in report.width_sweep.items():
        means = np.array(sweep.mean_estimand_reward)
        ax.plot(sweep.levels, means, marker="o", label=family)
        half = 2 * np.array(sweep.diff_sd_vs_90) / np.sqrt(sweep.n)
        ax.fill_between(sweep.levels, means - half, means + half, alpha=0.12, color="grey")
    ax.axvline(NOMINAL_COVERAGE, linestyle="--", color="grey")
    ax.set_xlabel("nominal level of the flexible reference's interval")
    ax.set_ylabel("mean estimand reward (band: 2 SE of the gap to 0.90)")
    ax.set_title("Width sweep, expert tier")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_coverage(report: ExpertAuditReport, path: Path) -> None:
    """Honest (flexible) and linear OLS coverage per family; whiskers: the honest
    coverage's acceptance region; dotted: the limit linear OLS must fall below."""
    families = list(report.families)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = np.arange(len(families))
    for i, family in enumerate(families):
        s = report.families[family]
        ax.bar(i - 0.2, s.coverage, 0.38, color="C0", label="flexible AIPW" if i == 0 else None)
        ax.bar(i + 0.2, s.linear_coverage, 0.38, color="C3", label="linear OLS" if i == 0 else None)
        lo, hi, _ = binomial_acceptance(s.n, NOMINAL_COVERAGE, report.per_check_alpha)
        ax.plot([i - 0.2, i - 0.2], [lo / s.n, hi / s.n], color="black", linewidth=1)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.axhline(LINEAR_COVERAGE_LIMIT, color="C3", linestyle=":")
    ax.set_xticks(x, families)
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel("share of 90% intervals covering the true ATE")
    ax.set_title("Expert tier: coverage of the flexible reference and of linear OLS")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rewards(report: ExpertAuditReport, rows: list[ExpertTaskAudit], path: Path) -> None:
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
    fig.suptitle("Expert tier: the flexible reference versus linear OLS and the probes")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_expert_plots(
    report: ExpertAuditReport, rows: list[ExpertTaskAudit], report_path: Path
) -> list[Path]:
    stem = report_path.with_suffix("")
    paths = [Path(f"{stem}_{name}.png") for name in ("width_sweep", "coverage", "rewards")]
    plot_width_sweep(report, paths[0])
    plot_coverage(report, paths[1])
    plot_rewards(report, rows, paths[2])
    return paths
