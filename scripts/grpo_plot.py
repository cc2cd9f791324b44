"""The GRPO demo's learning curve, drawn from its JSON report alone.

`plot_source(report)` is every number the figure shows; its SHA-256 goes into the
PNG's metadata (`Source-SHA256`), so a test can check that a committed figure was
drawn from the committed JSON and from nothing else.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

WINDOW = 8  # steps in the moving average


def plot_source(report: dict[str, Any]) -> dict[str, Any]:
    """The series the figure draws."""
    steps = report["grpo"]
    return {
        "step": [h["step"] for h in steps],
        "reward": [h["reward"] for h in steps],
        "valid_share": [h["valid_share"] for h in steps],
        "kl": [h.get("kl", 0.0) for h in steps],
        "held_out": [
            {
                k: e[k]
                for k in (
                    "model",
                    "tasks",
                    "valid_share",
                    "mean_clipped_reward",
                    "mean_clipped_reward_se",
                )
            }
            for e in report["evaluations"]
        ],
        "paired": {k: report["paired_grpo_minus_sft"][k] for k in ("tasks", "mean", "se")},
    }


def source_digest(report: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(plot_source(report), sort_keys=True).encode()).hexdigest()


def moving(values: list[float], window: int = WINDOW) -> list[float]:
    spans = [values[max(0, i - window + 1) : i + 1] for i in range(len(values))]
    return [sum(span) / len(span) for span in spans]


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    src = plot_source(report)
    recipe, steps = report["recipe"], src["step"]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for axis, key, title in (
        (axes[0], "reward", "mean clipped reward of the step's group"),
        (axes[1], "valid_share", "valid submissions in the step's group"),
    ):
        axis.plot(steps, src[key], "o", ms=3, alpha=0.45, label="per step")
        axis.plot(steps, moving(src[key]), "-", lw=2, label=f"mean of the last {WINDOW}")
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("GRPO step")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8, loc="lower right")
    axes[0].set_ylim(-1.05, 1.05)
    axes[1].set_ylim(-0.05, 1.05)
    axes[2].plot(steps, src["kl"], "-", lw=1.5)
    axes[2].set_title("KL to the SFT start (per token)", fontsize=10)
    axes[2].set_xlabel("GRPO step")
    axes[2].grid(alpha=0.3)
    held = src["held_out"]
    names = [
        f"{name}\nvalid {e['valid_share']:.2f}"
        for name, e in zip(("base", "SFT", "SFT + GRPO"), held, strict=False)
    ]
    means = [e["mean_clipped_reward"] for e in held]
    errors = [2 * e["mean_clipped_reward_se"] for e in held]
    bars = axes[3].bar(names, means, yerr=errors, capsize=5, color=["#999", "#6a9fd4", "#d46a6a"])
    for bar, e in zip(bars, held, strict=True):
        axes[3].annotate(
            f"valid {e['valid_share']:.2f}",
            (bar.get_x() + bar.get_width() / 2, 0),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    axes[3].axhline(0, color="black", lw=0.8)
    p = src["paired"]
    axes[3].set_title(
        f"held out, {held[0]['tasks']} tasks (±2 SE)\nGRPO - SFT paired: "
        f"{p['mean']:+.3f} ± {p['se']:.3f}",
        fontsize=10,
    )
    fig.suptitle(
        f"SmolLM2-135M-Instruct, GRPO on a live causal-gym stream: {len(steps)} steps, "
        f"{recipe['generations']} rollouts of one task a step, LoRA r={recipe['lora_rank']}, "
        f"T={report['temperature']}, 2 CPU cores",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Source-SHA256": source_digest(report)})
    plt.close(fig)
