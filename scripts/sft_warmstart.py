"""SFT warm start: teach SmolLM2-135M-Instruct to answer a causal-gym task with a
submit_answer call, from the reference agent's episodes on fresh-key train tasks.

    python scripts/sft_warmstart.py --out runs/demo [--tasks 24] [--epochs 2]
        [--rendering brief]

The reference agent (orchestrator/agents/scripted.py) copies the analyst kit into the
sandbox, runs it and submits what it printed. A 135M model cannot write the kit (tens
of kilobytes of code), so each transcript is condensed to what it can learn: the task
as GRPO will show it, and the reference's own submission (numbers to 4 significant
digits) as one submit_answer call. Tasks come from a LocalSource under a key made for
this run (never eval-v1); the episodes run in real sandboxes, and every reference
submission is scored, so the target's quality is on record.

With `--rendering brief` the task is shown as its brief (orchestrator/integrations/
brief.py) with submit_answer as the one tool, as the GRPO recipe trains it; the target
is the same reference submission, computed from the staged files in this process (the
brief policy runs no tools, so there is no episode to condense).

Writes OUT/sft/ (model and tokenizer), OUT/sft_transcripts.jsonl (one line per
episode) and OUT/sft_log.jsonl (the loss per step).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from smollm2_demo import load_model, load_tokenizer, prompt_ids, tools_of

from causal_gym.reference.answer import files_answer
from causal_gym.task_id import EVAL_V1_FAMILIES  # the demos train on the seed's three
from orchestrator.agents.episode import initial_messages, run_episode
from orchestrator.agents.scripted import ReferencePolicy
from orchestrator.integrations.brief import task_brief
from orchestrator.integrations.session import SessionSettings
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.trl import CausalGymTRL
from orchestrator.sandbox import make_sandbox


def rounded(value: Any) -> Any:
    """Numbers to 4 significant digits: shorter targets for a small model."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def reference_transcripts(tasks: int, rendering: str) -> list[dict[str, Any]]:
    """The reference agent's episodes on `tasks` fresh train tasks."""
    source = LocalSource(EVAL_V1_FAMILIES)
    kept = []
    try:
        for i in range(tasks):
            task = source.next_task()
            if rendering == "brief":
                kept.append(brief_row(source, task))
                continue
            box = make_sandbox("local")
            try:
                box.open(dict(task.files))
                result = run_episode(task, box, ReferencePolicy())
            finally:
                box.close()
            if result.submission is None:
                print(f"  episode {i}: {result.status.value}, no submission", flush=True)
                continue
            answer = {k: rounded(v) for k, v in result.submission.items()}
            score = source.score(task.handle, answer)
            kept.append(
                {
                    "family": task.family.value,
                    "user": initial_messages(task)[1]["content"],
                    "answer": answer,
                    "valid": score.valid,
                    "reward": score.reward,
                    "clipped_reward": score.clipped_reward,
                }
            )
    finally:
        source.close()
    return kept


def brief_row(source: LocalSource, task: Any) -> dict[str, Any]:
    """The reference's submission for a task shown as its brief, scored."""
    answer = {k: rounded(v) for k, v in files_answer(dict(task.files)).items()}
    score = source.score(task.handle, answer)
    return {
        "family": task.family.value,
        "user": task_brief(task),
        "answer": answer,
        "valid": score.valid,
        "reward": score.reward,
        "clipped_reward": score.clipped_reward,
    }


def encode(tok: Any, spec: CausalGymTRL, row: dict[str, Any]) -> tuple[list[int], int]:
    """Token ids of prompt + the reference's call, and where the call starts."""
    env = spec.environment_factory()  # only for its tools' signatures
    prompt = prompt_ids(tok, spec, env, row["user"])
    call = {"type": "function", "function": {"name": "submit_answer", "arguments": row["answer"]}}
    messages = [
        {"role": "system", "content": spec.system_prompt},
        {"role": "user", "content": row["user"]},
        {"role": "assistant", "content": "", "tool_calls": [call]},
    ]
    full = tok.apply_chat_template(messages, tools=tools_of(env), tokenize=True)
    ids = list(full if isinstance(full, list) else full["input_ids"])
    if ids[: len(prompt)] != prompt:
        raise SystemExit("sft_warmstart: the chat template does not extend the prompt it renders")
    return ids, len(prompt)


def train(model: Any, examples: list[tuple[list[int], int]], epochs: int, lr: float) -> list[dict]:
    """Next-token loss on the call's tokens only (logits for those positions only: the
    prompt's would be 2,000 x 49,152 floats)."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    order = random.Random("sft-warmstart")
    log = []
    model.train()
    step = 0
    for epoch in range(epochs):
        shuffled = examples[:]
        order.shuffle(shuffled)
        for ids, start in shuffled:
            began = time.process_time()
            tensor = torch.tensor([ids])
            hidden = model.model(input_ids=tensor).last_hidden_state[0, start - 1 : -1]
            loss = torch.nn.functional.cross_entropy(model.lm_head(hidden), tensor[0, start:])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            log.append(
                {"step": step, "epoch": epoch, "loss": loss.item(), "tokens": len(ids),
                 "cpu_s": round(time.process_time() - began, 2)}
            )  # fmt: skip
            print(f"  step {step}: loss {loss.item():.3f} ({len(ids)} tokens)", flush=True)
    return log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--rendering", choices=("readme", "brief"), default="readme")
    args = parser.parse_args()
    if args.tasks < 1 or args.epochs < 1 or args.lr <= 0:
        parser.error("--tasks and --epochs are at least 1, --lr above 0")
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.manual_seed(0)
    print(f"reference episodes on {args.tasks} fresh-key train tasks", flush=True)
    rows = reference_transcripts(args.tasks, args.rendering)
    with (args.out / "sft_transcripts.jsonl").open("w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    rewards = [r["clipped_reward"] for r in rows]
    print(f"  {len(rows)} kept, mean clipped reward {statistics.fmean(rewards):.3f}", flush=True)
    tok = load_tokenizer()
    settings = SessionSettings(rendering=args.rendering)
    spec = CausalGymTRL(LocalSource(EVAL_V1_FAMILIES), num_generations=1, settings=settings)
    examples = [encode(tok, spec, r) for r in rows]
    spec.close()
    model = load_model()
    print(f"SFT: {len(examples)} examples x {args.epochs} epochs, lr {args.lr}", flush=True)
    log = train(model, examples, args.epochs, args.lr)
    with (args.out / "sft_log.jsonl").open("w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in log)
    model.save_pretrained(args.out / "sft")
    tok.save_pretrained(args.out / "sft")
    print(f"saved {args.out / 'sft'}", flush=True)


if __name__ == "__main__":
    main()
