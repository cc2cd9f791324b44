"""The analyst run's figure, drawn from its committed JSON alone: the GRPO curve (mean
group reward, valid share, each decision's share per step, the probe) beside the
placebo's, and the held-out evaluation's arms with their paired differences.

    python scripts/analyst_plot.py docs/demo/analyst/analyst_run.json \
        docs/demo/analyst/analyst_curve.png

`plot_source(report)` is every number the figure shows; its SHA-256 goes into the
PNG's metadata (`Source-SHA256`), so a test can check the committed figure was drawn
from the committed JSON and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

WINDOW = 10  # steps in the moving averages


def _series(steps: list[dict[str, Any]]) -> dict[str, list[Any]]:
    def share(step: dict[str, Any], decision: str, option: str) -> float:
        return float(step["decision_shares"][decision].get(option, 0.0))

    return {
        "step": [s["step"] for s in steps],
        "reward": [s["mean_rollout_reward"] for s in steps],
        "valid_share": [s["valid_share"] for s in steps],
        "columns_pre": [share(s, "columns", "pre") for s in steps],
        "estimator_aipw": [share(s, "estimator", "aipw") for s in steps],
        "width_standard": [share(s, "width", "standard") for s in steps],
    }


def plot_source(report: dict[str, Any]) -> dict[str, Any]:
    """The series and numbers the figure draws."""
    evaluation = report.get("evaluation") or {}
    arms = evaluation.get("arms", {})
    paired = evaluation.get("paired_vs_start", {})
    return {
        "grpo": _series(report["grpo"]["steps"]),
        "probes": report["grpo"].get("probes", []),
        "placebo": _series(report["placebo"]["steps"]) if report.get("placebo") else None,
        "held_out": {
            name: {
                "mean": a["mean_clipped_reward"],
                "se": a["mean_clipped_reward_se"],
                "valid_share": a["valid_share"],
            }
            for name, a in arms.items()
        },
        "paired": {name: {"mean": p["mean"], "se": p["se"]} for name, p in paired.items()},
    }


def source_digest(report: dict[str, Any]) -> str:
    text = json.dumps(plot_source(report), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _smooth(values: list[float]) -> list[float]:
    out = []
    for i in range(len(values)):
        window = values[max(0, i - WINDOW + 1) : i + 1]
        out.append(sum(window) / len(window))
    return out


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import PngImagePlugin

    source = plot_source(report)
    fig, axes = plt.subplots(1, 3, figsize=(17, 5))
    curve, shares, bars = axes
    grpo, placebo = source["grpo"], source["placebo"]
    curve.plot(grpo["step"], grpo["reward"], color="#9ecae1", lw=0.8, label="GRPO, per step")
    curve.plot(
        grpo["step"],
        _smooth(grpo["reward"]),
        color="#08519c",
        lw=2,
        label=f"GRPO, {WINDOW}-step mean",
    )
    curve.plot(
        grpo["step"],
        _smooth(grpo["valid_share"]),
        color="#31a354",
        lw=1.5,
        label="valid share (GRPO)",
    )
    if placebo:
        curve.plot(
            placebo["step"],
            _smooth(placebo["reward"]),
            color="#de2d26",
            lw=2,
            label="placebo (rewards shuffled in groups)",
        )
    curve.set(
        xlabel="step (2 fresh tasks x 8 rollouts)",
        ylabel="mean clipped reward",
        title="Training reward on fresh stream tasks",
        ylim=(-1.05, 1.05),
    )
    curve.axhline(0, color="grey", lw=0.5)
    curve.legend(loc="lower right", fontsize=8)
    for name, color in (
        ("columns_pre", "#08519c"),
        ("estimator_aipw", "#e6550d"),
        ("width_standard", "#756bb1"),
    ):
        shares.plot(
            grpo["step"], _smooth(grpo[name]), color=color, lw=2, label=name.replace("_", ": ")
        )
    probes = source["probes"]
    if probes:
        shares.plot(
            [p["step"] for p in probes],
            [p["p_adjusted"] for p in probes],
            "o",
            color="black",
            label="probe: P(adjust for pre_treatment)",
        )
    shares.set(
        xlabel="step",
        ylabel="share of rollouts",
        ylim=(0, 1.02),
        title="Decisions GRPO samples (10-step means)",
    )
    shares.legend(loc="lower right", fontsize=8)
    held = source["held_out"]
    names = list(held)
    means = [held[n]["mean"] for n in names]
    errors = [2 * held[n]["se"] for n in names]
    colors = [
        "#08519c"
        if n == "grpo"
        else "#9ecae1"
        if n in ("start", "placebo", "sft-reference")
        else "#bdbdbd"
        for n in names
    ]
    bars.barh(range(len(names)), means, xerr=errors, color=colors)
    bars.set_yticks(range(len(names)), names)
    bars.invert_yaxis()
    for i, n in enumerate(names):
        note = ""
        if n in source["paired"]:
            p = source["paired"][n]
            note = f"  {p['mean']:+.3f} ± {p['se']:.3f} vs start"
        bars.text(max(means[i], 0) + 0.02, i, f"{means[i]:+.3f}{note}", va="center", fontsize=8)
    tasks = (report.get("evaluation") or {}).get("arms", {}).get("start", {}).get("tasks", 0)
    bars.set(
        xlabel="mean clipped reward (±2 SE), greedy",
        xlim=(-1, 1.6),
        title=f"Held out: every arm on the same {tasks} registered tasks",
    )
    bars.axvline(0, color="grey", lw=0.5)
    fig.tight_layout()
    meta = PngImagePlugin.PngInfo()
    meta.add_text("Source-SHA256", source_digest(report))
    fig.savefig(path, dpi=110, pil_kwargs={"pnginfo": meta})
    plt.close(fig)


if __name__ == "__main__":
    plot(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
