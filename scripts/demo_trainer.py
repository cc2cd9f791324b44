"""A small learner on a trainer stream: it learns how wide to make its intervals.

The policy is the honest reference analysis with two learnable knobs: a multiplier
on the width of its 90% interval, and the |z| cut-off above which it calls an effect
real (null_detect). Each step pulls a batch of fresh tasks from the stream, each
under two handles (a group of two), answers the two with opposite perturbations of the
knobs (antithetic evolution strategies: every handle is a single-use sample), scores
them through the stream, and moves the knobs along the reward differences. Pairing
on one task is what makes the signal usable: the spread of rewards between tasks
(about 0.44) is seven times a width perturbation's effect on one task, so unpaired
perturbations on different tasks once walked the wrong way for 24 steps. The reward is
largest for an honest 90% interval, so the width multiplier should drift to about 1
from wherever it starts, on either side.

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


def fit_task(task: Any) -> tuple[Any, Any]:
    """The task's data dictionary and honest fit: adjusted OLS, or flexible.py's AIPW on
    the expert tier's tasks (a fifth of train)."""
    dictionary = parse_readme(task.files["README.md"].decode("utf-8"))
    return dictionary, honest_fit(read_staged(task.files["data.csv"], dictionary), dictionary)


def answer(dictionary: Any, fit: Any, width: float, cutoff: float) -> dict[str, Any]:
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
) -> tuple[list[dict[str, float]], np.ndarray]:
    """The knobs' curve, step by step, and the knobs it ends with."""
    rng = np.random.default_rng(seed)  # the learner's own exploration noise
    theta = np.array([math.log(start_width), 1.645])  # log width multiplier, z cut-off
    scale = np.array([sigma, 0.5])
    curve = []
    for step in range(steps):
        groups = client.pull_groups(batch // 2, 2)
        noise = rng.standard_normal((len(groups), 2)) * scale
        rewards, differences, covered = [], [], []
        for group, eps in zip(groups, noise, strict=True):
            dictionary, fit = fit_task(group.task)
            pair = []
            for handle, sign in zip(group.handles, (1.0, -1.0), strict=True):
                width = math.exp(theta[0] + sign * eps[0])
                score = client.score(
                    handle, answer(dictionary, fit, width, theta[1] + sign * eps[1])
                )
                pair.append(max(-1.0, score.reward))  # clipped, as a trainer would
                covered.append(bool(score.covered))
            rewards += pair
            differences.append(pair[0] - pair[1])
        r, d = np.array(rewards), np.array(differences)
        advantage = d / (np.abs(d).mean() + 1e-8)  # the step's size does not follow the noise
        step_size = lr / (1.0 + step / 4.0)  # settles near the optimum (noise 0.14/step at lr)
        theta += step_size * (advantage[:, None] * noise).mean(axis=0) / scale
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
    return curve, theta


def held_out(
    client: StreamClient, start: np.ndarray, learned: np.ndarray, tasks: int
) -> dict[str, float]:
    """The starting and the learned knobs on the same fresh tasks (one handle each):
    the paired difference is what was learned, without the spread between tasks that
    a before/after comparison of training batches carries."""
    before: list[float] = []
    after: list[float] = []
    for group in client.pull_groups(tasks, 2):
        dictionary, fit = fit_task(group.task)
        for knobs, rewards, handle in (
            (start, before, group.handles[0]),
            (learned, after, group.handles[1]),
        ):
            score = client.score(handle, answer(dictionary, fit, math.exp(knobs[0]), knobs[1]))
            rewards.append(max(-1.0, score.reward))
    gain = np.array(after) - np.array(before)
    return {
        "tasks": tasks,
        "start_reward": float(np.mean(before)),
        "learned_reward": float(np.mean(after)),
        "gain": float(gain.mean()),
        "gain_se": float(gain.std(ddof=1) / math.sqrt(tasks)),
    }


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
    parser.add_argument(
        "--eval-tasks",
        type=int,
        default=32,
        help="Fresh tasks to compare the start and the learned knobs on.",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/demo-trainer"))
    args = parser.parse_args()
    starts = args.start_width or [0.3, 3.0]
    if (args.token is None) == (args.token_file is None):
        parser.error("give --token or --token-file")
    token = args.token or args.token_file.read_text().strip()
    if args.steps < 1 or args.batch < 2 or args.batch % 2 or args.eval_tasks < 2:
        parser.error(
            "--steps takes at least 1, --batch an even number of at least 2 (pairs), "
            "--eval-tasks at least 2"
        )
    client = StreamClient(args.url, token)
    curves, summary = {}, {}
    for start in starts:
        print(f"start: width multiplier {start}")
        label = f"start {start:g}"
        curves[label], learned = train(
            client, start, args.steps, args.batch, args.sigma, args.lr, args.seed
        )
        initial = np.array([math.log(start), 1.645])
        summary[label] = {
            "start_width": start,
            "steps": curves[label],
            "held_out": held_out(client, initial, learned, args.eval_tasks),
        }
    args.out.mkdir(parents=True, exist_ok=True)
    written = next(iter(summary.values())) if len(summary) == 1 else summary
    (args.out / "learning_curve.json").write_text(json.dumps(written, indent=2))
    plot(curves, args.out / "learning_curve.png")
    for label, record in summary.items():
        curve, test = record["steps"], record["held_out"]
        print(
            f"{label}: width multiplier {record['start_width']:.3f} -> "
            f"{curve[-1]['width_multiplier']:.3f}; on {test['tasks']} fresh tasks the reward went "
            f"{test['start_reward']:+.3f} -> {test['learned_reward']:+.3f} "
            f"(paired gain {test['gain']:+.3f} +- {test['gain_se']:.3f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
