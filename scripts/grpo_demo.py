"""GRPO through the TRL adapter, from the SFT warm start, with held-out evaluations
before and after.

    python scripts/sft_warmstart.py --out runs/demo
    python scripts/grpo_demo.py --out runs/demo [--steps 3] [--generations 4] [--eval-tasks 60]

Evaluations: the base model, the warm start and the GRPO result, on one held-out
sample of fresh-key tasks (a key made for it: no training task is among them, and
eval-v1 is left for evaluation proper; each task goes out as a group of three handles,
one per model), greedy on llama.cpp, first reply only:
the share of valid submissions and the mean clipped reward, with standard errors.
Training: TRL's GRPOTrainer on CPU with the adapter's spec (tasks from a LocalSource,
tools in real sandboxes, the scorer's clipped reward); one prompt a step, `--generations`
rollouts of it.

Writes OUT/demo.json (everything), OUT/grpo_log.jsonl (TRL's log per step, with the
valid share of the step's rollouts), OUT/grpo/ (the model) and, with --docs, the plot
and the table under docs/demo/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from smollm2_demo import (
    MAX_NEW_TOKENS,
    Evaluation,
    evaluate,
    export_gguf,
    held_out_sample,
    load_model,
    load_tokenizer,
)

from causal_gym.task_id import EVAL_V1_FAMILIES  # the demos train on the seed's three
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.trl import CausalGymTRL

REPO = Path(__file__).resolve().parent.parent


def grpo(sft: Path, out: Path, steps: int, generations: int, lr: float) -> list[dict[str, Any]]:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    tok = load_tokenizer(sft)
    spec = CausalGymTRL(LocalSource(EVAL_V1_FAMILIES), num_generations=generations)
    args = GRPOConfig(
        output_dir=str(out / "grpo-trainer"), max_steps=steps,
        per_device_train_batch_size=generations, num_generations=generations,
        max_completion_length=MAX_NEW_TOKENS, learning_rate=lr, beta=0.04, temperature=1.0,
        max_tool_calling_iterations=1, use_cpu=True, report_to=[], logging_steps=1,
        save_strategy="no", seed=0,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=load_model(sft),
        processing_class=tok,
        args=args,
        train_dataset=spec.train_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=spec.reward_funcs,
    )
    try:
        trainer.train()
    finally:
        spec.close()
    trainer.model.save_pretrained(out / "grpo")
    tok.save_pretrained(out / "grpo")
    steps_logged = [h for h in trainer.state.log_history if "reward" in h]
    rollouts = spec.log
    for i, entry in enumerate(steps_logged):
        mine = rollouts[i * generations : (i + 1) * generations]
        entry["valid_share"] = sum(r["valid"] for r in mine) / max(1, len(mine))
        entry["families"] = [r["family"] for r in mine]
    return steps_logged


def plot(log: list[dict[str, Any]], generations: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    steps = [h["step"] for h in log]
    panels = [
        ("reward", "mean clipped reward"),
        ("valid_share", "valid submissions"),
        ("kl", "KL to the warm start"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for axis, (key, title) in zip(axes, panels, strict=True):
        axis.plot(steps, [h.get(key, float("nan")) for h in log], marker="o")
        axis.set_title(title)
        axis.set_xlabel("GRPO step")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(alpha=0.3)
    axes[1].set_ylim(-0.05, 1.05)
    fig.suptitle(
        "SmolLM2-135M-Instruct from the SFT warm start: GRPO through the TRL adapter, "
        f"{generations} rollouts of one task a step, 2 CPU cores"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def table(evaluations: list[Evaluation]) -> str:
    lines = [
        "| model | tasks | valid share | mean clipped reward |",
        "| --- | ---: | ---: | ---: |",
    ]
    for e in evaluations:
        s = e.summary()
        lines.append(
            f"| {s['model']} | {s['tasks']} | {s['valid_share']:.3f} ± {s['valid_share_se']:.3f} "
            f"| {s['mean_clipped_reward']:.3f} ± {s['mean_clipped_reward_se']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-6)
    parser.add_argument("--eval-tasks", type=int, default=60)
    parser.add_argument("--docs", action="store_true", help="write docs/demo/ as well")
    args = parser.parse_args()
    sft = args.out / "sft"
    if not (sft / "config.json").exists():
        parser.error(f"no warm start in {sft}: run scripts/sft_warmstart.py --out {args.out}")
    if args.steps < 1 or args.generations < 2 or args.eval_tasks < 2:
        parser.error("--steps is at least 1, --generations and --eval-tasks at least 2")
    started = time.monotonic()
    tok = load_tokenizer()
    report: dict[str, Any] = {"command": " ".join(["python", *sys.argv]), "evaluations": []}
    evaluations: list[Evaluation] = []
    sample = held_out_sample(models=3)

    def held_out(model_dir: Path | None, folder: str, label: str) -> None:
        """Export one checkpoint to GGUF, evaluate it, and write what is known so far."""
        gguf = export_gguf(load_model(model_dir), tok, args.out / "gguf" / folder)
        evaluations.append(evaluate(gguf, tok, sample, args.eval_tasks, label))
        report["evaluations"] = [e.summary() for e in evaluations]
        report["wall_s"] = round(time.monotonic() - started, 1)
        (args.out / "demo.json").write_text(json.dumps(report, indent=2) + "\n")
        print(table(evaluations), flush=True)

    held_out(None, "base", "SmolLM2-135M-Instruct")
    held_out(sft, "sft", "after SFT")
    began = time.monotonic()
    log = grpo(sft, args.out, args.steps, args.generations, args.lr)
    report["grpo_wall_s"] = round(time.monotonic() - began, 1)
    report["grpo"] = log
    with (args.out / "grpo_log.jsonl").open("w") as handle:
        handle.writelines(json.dumps(h) + "\n" for h in log)
    held_out(args.out / "grpo", "grpo", f"after SFT + {args.steps} GRPO steps")
    sample.close()
    plot(log, args.generations, args.out / "grpo_curve.png")
    if args.docs:
        docs = REPO / "docs" / "demo"
        docs.mkdir(parents=True, exist_ok=True)
        plot(log, args.generations, docs / "grpo_curve.png")
        (docs / "demo.json").write_text(json.dumps(report, indent=2) + "\n")
        (docs / "demo.md").write_text(table(evaluations))


if __name__ == "__main__":
    main()
