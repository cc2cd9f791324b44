"""What every suite's plots share: the PNGs' names beside the report, the width sweep,
the per-family reward boxes, and the whisker that marks a coverage check's
acceptance region. Each suite draws its own coverage plot from these parts
(seed/plots.py, estimand/plots.py, expert/plots.py)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from causal_gym.audit.checks import NOMINAL_COVERAGE, Paired
from causal_gym.audit.knowledge import BAYES_GAIN_TARGET
from causal_gym.audit.slices import in_display_order
from causal_gym.audit.stats import binomial_acceptance

#: The plots every suite writes, in this order, as <report stem>_<name>.png: the suite
#: draws the first three, and `slices` is drawn here from the report alone.
PLOT_NAMES = ("width_sweep", "coverage", "rewards", "slices")


def write_plots(
    report_path: Path, draw: Mapping[str, Callable[[Path], None]], report: Any
) -> list[Path]:
    """Each plot drawn to its PNG beside the report; the suite supplies every name
    but the slices plot, which every suite shares."""
    draw = {**draw, "slices": partial(plot_slices, report)}
    if tuple(draw) != PLOT_NAMES:
        raise ValueError(f"a suite draws {PLOT_NAMES[:-1]}, not {tuple(draw)[:-1]}")
    stem = report_path.with_suffix("")
    paths = [Path(f"{stem}_{name}.png") for name in PLOT_NAMES]
    for path, drawer in zip(paths, draw.values(), strict=True):
        drawer(path)
    return paths


def save(fig: Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def acceptance_whisker(ax: Axes, x: float, n: int, alpha: float) -> None:
    """The coverage counts a correct system lands in with probability 1 - alpha."""
    lo, hi, _ = binomial_acceptance(n, NOMINAL_COVERAGE, alpha)
    ax.plot([x, x], [lo / n, hi / n], color="black", linewidth=1)


def plot_width_sweep(report: Any, path: Path, title: str) -> None:
    """Mean estimand reward by nominal level per group (any report with `width_sweep`),
    with 2-SE bands of the paired gap to 0.90; an "overall" group drawn in black."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for group, sweep in report.width_sweep.items():
        style = {"linewidth": 2.5, "color": "black"} if group == "overall" else {"alpha": 0.8}
        means = np.array(sweep.mean_estimand_reward)
        ax.plot(sweep.levels, means, marker="o", label=group, **style)
        half = 2 * np.array(sweep.diff_sd_vs_90) / np.sqrt(sweep.n)
        ax.fill_between(sweep.levels, means - half, means + half, alpha=0.12, color="grey")
    ax.axvline(NOMINAL_COVERAGE, linestyle="--", color="grey")
    ax.set_xlabel("nominal level of every interval (reference estimates, rescaled SEs)")
    ax.set_ylabel("mean estimand reward (band: 2 SE of the gap to 0.90)")
    ax.set_title(title)
    ax.legend()
    save(fig, path)


def plot_rewards_by_family(report: Any, rows: list[Any], path: Path, title: str) -> None:
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
    save(fig, path)


def plot_slices(report: Any, path: Path) -> None:
    """The generator-aware probe's gain per public slice with 2-SE bars, scored (the
    paired difference) and expected under its own posterior, against the 0.005 target.
    A suite of one tier has no slices: its families are drawn."""
    entries: list[tuple[str, Paired, Paired | None]] = [
        (name, s.bayes_prior, s.model_gain) for name, s in in_display_order(report.slices)
    ] or [(f, gain, None) for f, gain in report.bayes_prior.items() if f != "overall"]
    fig, ax = plt.subplots(figsize=(8, 2.2 + 0.32 * len(entries)), layout="constrained")
    y = np.arange(len(entries))[::-1]
    for offset, pick, label in (
        (0.15, lambda e: e[1], "scored: probe minus reference"),
        (-0.15, lambda e: e[2], "expected under the probe's posterior"),
    ):
        shown = [(yy, pick(e)) for yy, e in zip(y, entries, strict=True) if pick(e) is not None]
        if not shown:
            continue
        ax.errorbar(
            [g.diff_mean for _, g in shown],
            [yy + offset for yy, _ in shown],
            xerr=[2 * g.diff_sd / math.sqrt(g.n) for _, g in shown],
            fmt="o",
            markersize=3,
            capsize=2,
            label=label,
        )
    ax.axvline(BAYES_GAIN_TARGET, color="red", linestyle="--", label="target: 0.005 a task")
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(y, [e[0] for e in entries], fontsize=7)
    ax.set_xlabel(
        "bayes-prior probe's gain over the reference, bars 2 SE\n"
        "(task reward; a slice named by an estimand: that estimand's reward)"
    )
    ax.set_title("What knowing the generator is worth, per public slice")
    fig.legend(fontsize=7, loc="outside lower center", ncol=3)
    fig.savefig(path, dpi=120)  # the constrained layout places the legend below
    plt.close(fig)
