"""A small learner on a trainer stream: it learns how wide to make its intervals.

The policy is the honest reference analysis with two learnable knobs: a multiplier
on the width of its 90% interval, and the |z| cut-off above which it calls an effect
real (null_detect). Each step pulls a batch of fresh tasks from the stream (task
mode), answers each with its own random perturbation of the knobs (evolution-strategy
style: every task is a single-use sample), scores them through the stream, and moves
the knobs along the reward-weighted perturbations. The reward is smallest for an
honest 90% interval, so the width multiplier should drift to about 1 from wherever
it starts, on either side.

    causal-gym-run stream start demo                  # prints its URL
    causal-gym-run stream token mint demo trainer --to trainer.token
    .venv/bin/python scripts/demo_trainer.py --url URL --token-file trainer.token   # both starts
    .venv/bin/python scripts/demo_trainer.py --url URL --token-file trainer.token --start-width 0.3
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from causal_gym.reference.analyst import Z, parse_readme, read_staged  # noqa: E402
from causal_gym.reference.answer import honest_fit  # noqa: E402
from orchestrator.stream import StreamClient  # noqa: E402


def answer(task: Any, width: float, cutoff: float) -> dict[str, Any]:
    dictionary = parse_readme(task.files["README.md"].decode("utf-8"))
    # adjusted OLS, or flexible.py's AIPW on the expert tier's tasks (a fifth of train)
    fit = honest_fit(read_staged(task.files["data.csv"], dictionary), dictionary)
    half = width * Z * fit.se
    out: dict[str, Any] = {
        "estimate": fit.estimate,
        "ci_lower": fit.estimate - half,
        "ci_upper": fit.estimate + half,
    }
    if dictionary.family == "adjustment":
        out["adjustment_set"] = list(dictionary.pre_treatment)
    elif dictionary.family == "null_detect":
        out["effect_probability"] = 0.95 if abs(fit.estimate / fit.se) > cutoff else 0.25
    return out


def train(
    client: StreamClient,
    start_width: float,
    steps: int,
    batch: int,
    sigma: float,
    lr: float,
    seed: int,
) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)  # the learner's own exploration noise
    theta = np.array([math.log(start_width), 1.645])  # log width multiplier, z cut-off
    curve = []
    for step in range(steps):
        tasks = client.pull_tasks(batch)
        noise = rng.standard_normal((batch, 2)) * np.array([sigma, 0.5])
        rewards, covered = [], []
        for task, eps in zip(tasks, noise, strict=True):
            width, cutoff = math.exp(theta[0] + eps[0]), theta[1] + eps[1]
            score = client.score(task.handle, answer(task, width, cutoff))
            rewards.append(max(-1.0, score.reward))  # clipped, as a trainer would
            covered.append(bool(score.covered))
        r = np.array(rewards)
        advantage = (r - r.mean()) / (r.std() + 1e-8)
        step_size = lr / math.sqrt(1.0 + step / 10.0)  # settles near the optimum
        theta += step_size * (advantage[:, None] * noise).mean(axis=0) / np.array([sigma, 0.5])
        curve.append(
            {
                "step": step,
                "mean_reward": float(r.mean()),
                "coverage": float(np.mean(covered)),
                "width_multiplier": float(math.exp(theta[0])),
                "cutoff": float(theta[1]),
            }
        )
        print(
            f"step {step:3d}  reward {r.mean():+.3f}  coverage {np.mean(covered):.2f}  "
            f"width multiplier {math.exp(theta[0]):.3f}  cut-off {theta[1]:.2f}",
            flush=True,
        )
    return curve


def plot(curves: dict[str, list[dict[str, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for label, curve in curves.items():
        steps = [c["step"] for c in curve]
        left.plot(steps, [c["width_multiplier"] for c in curve], marker="o", label=label)
        right.plot(steps, [c["mean_reward"] for c in curve], marker="o", label=label)
    left.axhline(1.0, color="grey", linestyle="--", label="honest 90% width")
    left.set_xlabel("step")
    left.set_ylabel("interval width / reference width")
    left.set_yscale("log")
    left.set_title("Learned width multiplier")
    left.legend()
    right.set_xlabel("step")
    right.set_ylabel("mean reward (clipped at -1)")
    right.set_title("Reward")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="The stream's URL.")
    parser.add_argument("--token", help="A consumer token.")
    parser.add_argument("--token-file", type=Path, help="A file holding a consumer token.")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--sigma", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=0.4)
    parser.add_argument("--start-width", type=float, action="append")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/demo-trainer"))
    args = parser.parse_args()
    starts = args.start_width or [0.3, 3.0]
    if (args.token is None) == (args.token_file is None):
        parser.error("give --token or --token-file")
    token = args.token or args.token_file.read_text().strip()
    client = StreamClient(args.url, token)
    curves = {}
    for start in starts:
        print(f"start: width multiplier {start}")
        curves[f"start {start:g}"] = train(
            client, start, args.steps, args.batch, args.sigma, args.lr, args.seed
        )
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {label: {"steps": curve} for label, curve in curves.items()}
    if len(curves) == 1:
        summary = next(iter(summary.values()))  # type: ignore[assignment]
    (args.out / "learning_curve.json").write_text(json.dumps(summary, indent=2))
    plot(curves, args.out / "learning_curve.png")
    for label, curve in curves.items():
        print(
            f"{label}: width multiplier {curve[0]['width_multiplier']:.3f} -> "
            f"{curve[-1]['width_multiplier']:.3f}, reward {curve[0]['mean_reward']:+.3f} -> "
            f"{curve[-1]['mean_reward']:+.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
