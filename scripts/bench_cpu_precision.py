"""Why the analyst GRPO run trains in float32 without activation checkpointing: one
forward and backward pass of SmolLM2-135M with the run's LoRA adapter, on a batch of
sequences of 500 tokens (a GRPO step has 16), timed in CPU seconds in one process under
TRL's defaults (bf16 autocast, gradient checkpointing) and under the run's settings.

    python scripts/bench_cpu_precision.py [--batch 4] [--repeats 1]
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyst_recipe import lora_config
from smollm2_demo import load_model


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def step(model: object, ids: object, bf16: bool) -> float:
    import torch

    began = cpu()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=ids, logits_to_keep=64).logits  # type: ignore[operator]
    logits.float().mean().backward()
    return cpu() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    import torch
    from peft import get_peft_model

    torch.manual_seed(0)
    model = get_peft_model(load_model(), lora_config())
    ids = torch.randint(0, 49000, (args.batch, 500))
    results = {}
    for name, bf16, checkpointing in (
        ("TRL defaults (bf16 autocast, gradient checkpointing)", True, True),
        ("the run (float32, no checkpointing)", False, False),
    ):
        if checkpointing:
            model.gradient_checkpointing_enable()
            model.enable_input_require_grads()
        else:
            model.gradient_checkpointing_disable()
        model.train()
        times = [step(model, ids, bf16) for _ in range(args.repeats)]
        results[name] = min(times)
        print(f"{name}: {min(times):.1f} CPU s (min of {args.repeats})", flush=True)
    first, second = results.values()
    print(f"ratio: {first / second:.2f}x")


if __name__ == "__main__":
    main()
