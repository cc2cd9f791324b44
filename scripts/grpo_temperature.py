"""Which sampling temperature gives GRPO something to compare: the SFT start's
within-group reward spread at each temperature tried, on the same tasks.

    python scripts/grpo_temperature.py --model runs/demo/sft [--tasks 16]
        [--temperatures 0.7,1.0,1.3] [--json docs/demo/grpo_temperature.json]

GRPO's advantage is a rollout's reward minus its group's mean: a group whose rollouts
all score the same teaches nothing. For each temperature the SFT checkpoint (exported
to GGUF, sampled by llama.cpp with TRL's sampler settings: no top-k, no top-p, no
repetition penalty) answers each task `--generations` times in the brief rendering;
every answer is scored by the task's source. Reported per temperature: the mean
within-group standard deviation of the clipped reward, the share of groups with any
spread, the mean reward and the valid share. The recipe takes the temperature with the
largest mean spread whose valid share is not below the greedy one's by more than 0.1
(spread from answers that do not parse is noise, not signal).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from grpo_recipe import RECIPE
from smollm2_demo import (
    answer_once,
    export_gguf,
    held_out_sample,
    load_model,
    load_tokenizer,
    prompt_ids,
)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from llama_cpp import Llama

    tok = load_tokenizer(args.model)
    gguf = export_gguf(load_model(args.model), tok, args.out / "gguf-sft")
    temperatures = [0.0, *args.temperatures]
    draws = 1 + args.generations * len(args.temperatures)  # one greedy answer, then groups
    sample = held_out_sample(models=draws, rendering=RECIPE.rendering)
    env = sample.environment_factory()
    llm = Llama(model_path=str(gguf), n_ctx=4096, n_threads=2, seed=0, verbose=False)
    groups: dict[float, list[list[tuple[bool, float]]]] = {t: [] for t in temperatures}
    try:
        for slot in range(args.tasks):
            for t in temperatures:
                group = []
                for _ in range(args.generations if t > 0 else 1):
                    ids = prompt_ids(tok, sample, env, env.reset(task_slot=slot))
                    out = llm.create_completion(
                        prompt=ids, max_tokens=RECIPE.max_completion_tokens, temperature=t,
                        top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                    )  # fmt: skip
                    answer_once(env, str(out["choices"][0]["text"]))
                    env.get_reward()
                    row = sample.log[-1]
                    group.append((bool(row["valid"]), float(row["clipped_reward"])))
                groups[t].append(group)
            print(f"  task {slot + 1}/{args.tasks}", flush=True)
    finally:
        llm.close()
        sample.close()
    rows = []
    for t in temperatures:
        spreads = [statistics.pstdev(r for _, r in g) for g in groups[t]]
        flat = [x for g in groups[t] for x in g]
        rows.append(
            {
                "temperature": t,
                "tasks": len(groups[t]),
                "rollouts_per_task": len(groups[t][0]),
                "mean_within_group_sd": statistics.fmean(spreads),
                "groups_with_spread": sum(s > 1e-9 for s in spreads) / len(spreads),
                "mean_clipped_reward": statistics.fmean(r for _, r in flat),
                "valid_share": sum(v for v, _ in flat) / len(flat),
            }
        )
    greedy = rows[0]["valid_share"]
    usable = [r for r in rows[1:] if r["valid_share"] >= greedy - 0.1] or rows[1:]
    chosen = max(usable, key=lambda r: r["mean_within_group_sd"])["temperature"]
    return {
        "command": " ".join(["python", *sys.argv]),
        "model": str(args.model),
        "rows": rows,
        "chosen_temperature": chosen,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--generations", type=int, default=RECIPE.generations)
    parser.add_argument("--temperatures", default="0.7,1.0,1.3")
    parser.add_argument("--out", type=Path, default=Path("runs/temperature"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        args.temperatures = [float(t) for t in args.temperatures.split(",")]
    except ValueError:
        parser.error("--temperatures is a comma-separated list of numbers above 0")
    if args.tasks < 2 or args.generations < 2 or min(args.temperatures) <= 0:
        parser.error("--tasks and --generations are at least 2, temperatures above 0")
    report = measure(args)
    text = json.dumps(report, indent=2) + "\n"
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
