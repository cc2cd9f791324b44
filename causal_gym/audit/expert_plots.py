"""PNG plots beside the expert audit's numbers: the width sweep and the reward
distributions (drawn as for the multi-estimand audit), and honest versus linear OLS
coverage."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.estimand_plots import plot_rewards, plot_width_sweep
from causal_gym.audit.expert_audit import ExpertTaskAudit
from causal_gym.audit.expert_report import LINEAR_COVERAGE_LIMIT, ExpertAuditReport
from causal_gym.audit.stats import binomial_acceptance


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
    ax.set_ylim(0.0, 1.15)
    ax.set_ylabel("share of 90% intervals covering the true ATE")
    ax.set_title("Expert tier: coverage of the flexible reference and of linear OLS")
    ax.legend(loc="upper center", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_expert_plots(
    report: ExpertAuditReport, rows: list[ExpertTaskAudit], report_path: Path
) -> list[Path]:
    stem = report_path.with_suffix("")
    paths = [Path(f"{stem}_{name}.png") for name in ("width_sweep", "coverage", "rewards")]
    plot_width_sweep(report, paths[0], "Width sweep, expert tier")
    plot_coverage(report, paths[1])
    plot_rewards(
        report,
        rows,
        paths[2],
        "Expert tier: the flexible reference versus linear OLS and the probes",
    )
    return paths
