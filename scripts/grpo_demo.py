"""GRPO through the TRL adapter on a live stream, from the SFT warm start, with a
paired held-out evaluation before and after.

    causal-gym-run stream start grpo-demo --families ate,adjustment,null_detect
    causal-gym-run stream token mint grpo-demo trainer --to runs/demo/trainer.token
    python scripts/sft_warmstart.py --out runs/demo --tasks 128 --epochs 1 --rendering brief
    python scripts/grpo_demo.py --out runs/demo --url URL --token-file runs/demo/trainer.token
        [--steps 48] [--eval-tasks 100] [--docs]

Training: TRL's GRPOTrainer on CPU with the recipe of grpo_recipe.py (the brief
rendering, LoRA adapters, a group of 8 rollouts of one task a step, the stream's own
clipped reward), tasks pulled from the stream as groups under its fresh key.

Evaluation: one held-out sample of fresh tasks under a key made here (so no training
task is among them: the check compares data.csv digests, and eval-v1 stays for
evaluation proper), each task handed out as a group of three handles, one per model,
so the base model, the warm start and the GRPO result answer the same tasks, greedy on
llama.cpp. Reported: each model's valid share and mean clipped reward, and the paired
difference GRPO minus SFT (mean, SE, per family), with the KL to the start.

Writes OUT/demo.json (everything), OUT/grpo/ (the merged model), OUT/inspect/ (the
held-out evaluations as inspect_ai logs) and, with --docs, the same under docs/demo/:
grpo_run.json, grpo_curve.png (drawn from grpo_run.json alone) and grpo-inspect/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from grpo_inspect import write_log
from grpo_plot import plot
from grpo_recipe import RECIPE, grpo_config, lora_config
from smollm2_demo import (
    Evaluation,
    evaluate,
    export_gguf,
    held_out_sample,
    load_model,
    load_tokenizer,
)

from orchestrator.integrations.session import SessionSettings
from orchestrator.integrations.sources import LocalSource, StreamSource, TaskSource
from orchestrator.integrations.trl import CausalGymTRL

REPO = Path(__file__).resolve().parent.parent
LABELS = ("SmolLM2-135M-Instruct", "after SFT", "after SFT + GRPO")


def step_timer() -> Any:
    """A TRL callback that records each step's wall time and prints a progress line."""
    from transformers import TrainerCallback

    class Timer(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.began = time.monotonic()
            self.wall: list[float] = []

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.began = time.monotonic()

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if logs and "reward" in logs:
                self.wall.append(time.monotonic() - self.began)
                print(
                    f"  step {state.global_step}/{state.max_steps}: reward "
                    f"{logs['reward']:+.3f} (sd {logs.get('reward_std', 0.0):.3f}), "
                    f"kl {logs.get('kl', 0.0):.4f}, {self.wall[-1]:.0f} s",
                    flush=True,
                )

    return Timer()


def grpo(sft: Path, out: Path, source: TaskSource, steps: int, temperature: float) -> list[dict]:
    """Train; returns one entry per step (TRL's log plus the valid share and digests)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOTrainer

    tok = load_tokenizer(sft)
    spec = CausalGymTRL(
        source, num_generations=RECIPE.generations, prompts_per_step=RECIPE.prompts_per_step,
        settings=SessionSettings(rendering="brief"),
    )  # fmt: skip
    timer = step_timer()
    trainer = GRPOTrainer(
        model=load_model(sft),
        processing_class=tok,
        args=grpo_config(out / "grpo-trainer", steps, temperature=temperature),
        train_dataset=spec.train_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=spec.reward_funcs,
        peft_config=lora_config(),
        callbacks=[timer],
    )
    try:
        trainer.train()
    finally:
        spec.close()
    merged = trainer.model.merge_and_unload()
    merged.save_pretrained(out / "grpo")
    tok.save_pretrained(out / "grpo")
    per_step = RECIPE.generations * RECIPE.prompts_per_step
    logged = [h for h in trainer.state.log_history if "reward" in h]
    for i, entry in enumerate(logged):
        mine = spec.log[i * per_step : (i + 1) * per_step]
        entry["valid_share"] = sum(r["valid"] for r in mine) / max(1, len(mine))
        entry["families"] = sorted({str(r["family"]) for r in mine})
        entry["task_digests"] = sorted({str(r["task_digest"]) for r in mine})
        entry["wall_s"] = round(timer.wall[i], 1) if i < len(timer.wall) else None
    return logged


def paired(after: Evaluation, before: Evaluation) -> dict[str, Any]:
    """after - before on the same tasks: mean, SE, and per family."""
    if after.digests != before.digests:
        raise SystemExit("grpo_demo: the two evaluations did not answer the same tasks")

    def stats(rows: list[tuple[float, float]]) -> dict[str, float]:
        diffs = [a - b for a, b in rows]
        n = len(diffs)
        se = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else float("nan")
        return {"tasks": n, "mean": statistics.fmean(diffs), "se": se}

    rows = list(zip(after.rewards, before.rewards, strict=True))
    report: dict[str, Any] = stats(rows)
    report["families"] = {
        family: stats([r for r, f in zip(rows, after.families, strict=True) if f == family])
        for family in sorted(set(after.families))
    }
    report["valid_share_change"] = (sum(after.valid) - sum(before.valid)) / len(after.valid)
    return report


def source_of(args: argparse.Namespace) -> TaskSource:
    if args.local:
        from causal_gym.task_id import EVAL_V1_FAMILIES

        return LocalSource(EVAL_V1_FAMILIES)
    return StreamSource.from_token_file(args.url, args.token_file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--url", help="the stream's URL (causal-gym-run stream start prints it)")
    parser.add_argument("--token-file", type=Path, help="the consumer token's file")
    parser.add_argument("--local", action="store_true", help="train on a LocalSource instead")
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--temperature", type=float, default=RECIPE.temperature)
    parser.add_argument("--eval-tasks", type=int, default=100)
    parser.add_argument("--docs", action="store_true", help="write docs/demo/ as well")
    args = parser.parse_args()
    sft = args.out / "sft"
    if not (sft / "config.json").exists():
        parser.error(f"no warm start in {sft}: run scripts/sft_warmstart.py --out {args.out}")
    if not args.local and not (args.url and args.token_file and args.token_file.is_file()):
        parser.error("give --url and an existing --token-file (a live stream), or --local")
    if args.steps < 1 or args.eval_tasks < 2 or args.temperature <= 0:
        parser.error("--steps is at least 1, --eval-tasks at least 2, --temperature above 0")
    started = time.monotonic()
    tok = load_tokenizer(sft)
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        # the recipe as run: its temperature is the one given (grpo_temperature.py's choice)
        "recipe": {
            **RECIPE.__dict__,
            "temperature": args.temperature,
            "lora_targets": list(RECIPE.lora_targets),
        },
        "temperature": args.temperature,
        "source": "local" if args.local else "stream",
        "evaluations": [],
    }
    evaluations: list[Evaluation] = []
    sample = held_out_sample(models=len(LABELS), rendering="brief")

    def held_out(model_dir: Path | None, folder: str, label: str) -> None:
        gguf = export_gguf(load_model(model_dir), tok, args.out / "gguf" / folder)
        evaluations.append(
            evaluate(gguf, tok, sample, args.eval_tasks, label,
                     max_tokens=RECIPE.max_completion_tokens)
        )  # fmt: skip
        report["evaluations"] = [{**e.summary(), "per_task": e.per_task()} for e in evaluations]
        report["wall_s"] = round(time.monotonic() - started, 1)
        write_log(evaluations[-1], args.out / "inspect" / f"{folder}.eval", report)
        (args.out / "demo.json").write_text(json.dumps(report, indent=2) + "\n")
        s = evaluations[-1].summary()
        print(f"{label}: valid {s['valid_share']:.2f}, reward {s['mean_clipped_reward']:+.3f} "
              f"± {s['mean_clipped_reward_se']:.3f}", flush=True)  # fmt: skip

    held_out(None, "base", LABELS[0])
    held_out(sft, "sft", LABELS[1])
    began = time.monotonic()
    log = grpo(sft, args.out, source_of(args), args.steps, args.temperature)
    report["grpo_wall_s"] = round(time.monotonic() - began, 1)
    report["grpo"] = log
    held_out(args.out / "grpo", "grpo", LABELS[2])
    sample.close()
    report["paired_grpo_minus_sft"] = paired(evaluations[2], evaluations[1])
    report["kl_to_start_last_steps"] = statistics.fmean(h.get("kl", 0.0) for h in log[-5:])
    (args.out / "demo.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(report, args.out / "grpo_curve.png")
    if args.docs:
        docs = REPO / "docs" / "demo"
        (docs / "grpo_run.json").write_text(json.dumps(report, indent=2) + "\n")
        plot(json.loads((docs / "grpo_run.json").read_text()), docs / "grpo_curve.png")
        shutil.rmtree(docs / "grpo-inspect", ignore_errors=True)
        shutil.copytree(args.out / "inspect", docs / "grpo-inspect")
    p = report["paired_grpo_minus_sft"]
    print(f"paired GRPO - SFT: {p['mean']:+.4f} ± {p['se']:.4f} on {p['tasks']} tasks", flush=True)


if __name__ == "__main__":
    main()
