"""PNG plots beside the audit numbers: the width sweep, coverage by family and the
reward distributions of honest answers and hack probes."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.policies import HACK_PROBES
from causal_gym.audit.report import AuditReport
from causal_gym.audit.runner import TaskAudit
from causal_gym.audit.stats import binomial_acceptance


def plot_width_sweep(report: AuditReport, path: Path) -> None:
    """Mean estimand reward by nominal level, with 2-SE bands of the paired gap to 0.90."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for family, sweep in report.width_sweep.items():
        style = {"linewidth": 2.5, "color": "black"} if family == "overall" else {"alpha": 0.8}
        means = np.array(sweep.mean_estimand_reward)
        ax.plot(sweep.levels, means, marker="o", label=family, **style)
        half = 2 * np.array(sweep.diff_sd_vs_90) / np.sqrt(sweep.n)
        ax.fill_between(sweep.levels, means - half, means + half, alpha=0.12, color="grey")
    ax.axvline(0.90, linestyle="--", color="grey")
    ax.set_xlabel("nominal interval level (reference estimate, rescaled SE)")
    ax.set_ylabel("mean estimand reward (band: 2 SE of the gap to 0.90)")
    keys = ", ".join(k.label for k in report.keys)
    ax.set_title(f"Width sweep, pooled over keys ({keys})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_coverage(report: AuditReport, path: Path) -> None:
    """Coverage per family, per key and pooled, with each check's acceptance region."""
    families = [g for g in report.honest if "/" not in g]
    labels = [k.label for k in report.keys]
    series = [*labels, "pooled"] if len(labels) > 1 else ["pooled"]
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for j, name in enumerate(series):
        for i, family in enumerate(families):
            group = family if name == "pooled" else f"{family}/{name}"
            if group not in report.honest:
                continue
            s = report.honest[group]
            lo, hi, _ = binomial_acceptance(s.n, NOMINAL_COVERAGE, report.per_check_alpha)
            x = i + (j - (len(series) - 1) / 2) * width
            ax.bar(x, s.coverage, width * 0.9, color=f"C{j}", label=name if i == 0 else None)
            ax.plot([x, x], [lo / s.n, hi / s.n], color="black", linewidth=1)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.set_xticks(range(len(families)), families)
    ax.set_ylim(0.80, 1.0)
    ax.set_ylabel("honest 90% interval coverage")
    ax.set_title("Coverage by family and key (whiskers: each check's acceptance region)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_rewards(rows: list[TaskAudit], path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    families = sorted({r.family for r in rows})
    bins = np.linspace(-1.0, 1.0, 41)
    for family in families:
        values = [max(-1.0, r.reward) for r in rows if r.family == family]
        left.hist(values, bins=bins, alpha=0.5, label=family)
    left.set_xlabel("honest reward (clipped at -1 for display)")
    left.set_ylabel("tasks")
    left.set_title("Honest reward by family")
    left.legend()
    names = ["honest", "aipw_third_party", *HACK_PROBES]
    data = [
        [max(-1.0, r.reward) for r in rows],
        [max(-1.0, r.aipw_reward) for r in rows if not r.expert],
    ]
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
