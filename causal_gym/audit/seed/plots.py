"""The seed suite's plots: coverage per family and key with each check's acceptance
region, and the honest reward beside the third-party analyst and the hack probes (the
width sweep is plots.py's)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from causal_gym.audit.checks import NOMINAL_COVERAGE
from causal_gym.audit.plots import acceptance_whisker, plot_width_sweep, save, write_plots
from causal_gym.audit.policies import HACK_PROBES
from causal_gym.audit.seed.report import SeedReport
from causal_gym.audit.seed.rows import SeedRow


def plot_coverage(report: SeedReport, path: Path) -> None:
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
            x = i + (j - (len(series) - 1) / 2) * width
            ax.bar(x, s.coverage, width * 0.9, color=f"C{j}", label=name if i == 0 else None)
            acceptance_whisker(ax, x, s.n, report.per_check_alpha)
    ax.axhline(NOMINAL_COVERAGE, color="green", linestyle="--")
    ax.set_xticks(range(len(families)), families)
    ax.set_ylim(0.80, 1.0)
    ax.set_ylabel("honest 90% interval coverage")
    ax.set_title("Coverage by family and key (whiskers: each check's acceptance region)")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, path)


def plot_rewards(rows: list[SeedRow], path: Path) -> None:
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
    save(fig, path)


def write(report: SeedReport, rows: list[SeedRow], report_path: Path) -> list[Path]:
    keys = ", ".join(k.label for k in report.keys)
    return write_plots(
        report_path,
        {
            "width_sweep": partial(
                plot_width_sweep, report, title=f"Width sweep, pooled over keys ({keys})"
            ),
            "coverage": partial(plot_coverage, report),
            "rewards": partial(plot_rewards, rows),
        },
        report,
    )
