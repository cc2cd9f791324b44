"""The GRPO recipe the demo runs on 2 CPU cores, in one place: the profiler
(profile_grpo_step.py), the demo (grpo_demo.py) and the GPU configurations'
test read it from here.

Each choice was measured (docs/pages/trainers.md has the figures):
- the brief rendering (orchestrator/integrations/brief.py): ~880 prompt tokens
  instead of ~2,290, the summary a small model can act on, submit_answer the one tool;
- LoRA adapters on every projection of SmolLM2-135M's top 12 layers: the backward
  pass stops below them, the reference model for the KL term is the same weights with
  the adapters switched off (no second copy), and the optimizer keeps state for about
  1% of the weights;
- a group of 8 rollouts of one task, at the temperature whose groups had the largest
  within-group reward spread among those tried with the SFT start (GRPO learns only
  from groups whose rewards differ);
- the stream's own clipped reward, nothing added.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Recipe:
    rendering: str = "brief"
    generations: int = 8
    prompts_per_step: int = 1
    max_completion_tokens: int = 160  # the reference's answers: 90 tokens on average, 184 at most
    temperature: float = 1.0
    #: 3e-4, up from 1e-4 in the first 48-step run, whose KL to the start stayed near 1e-3:
    #: the KL term (beta * KL ~ 4e-5) was not what held the policy back, the step size was
    learning_rate: float = 3e-4
    beta: float = 0.04
    lora_rank: int = 16
    lora_alpha: int = 32
    #: the top 12 of SmolLM2-135M's 30 layers: the backward pass stops below them
    lora_layers: tuple[int, ...] = tuple(range(18, 30))
    lora_targets: tuple[str, ...] = (
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
    )  # fmt: skip


RECIPE = Recipe()


def lora_config(recipe: Any = RECIPE) -> Any:
    """The adapters GRPOTrainer wraps the model in (peft), from any recipe with the
    lora_rank, lora_alpha, lora_targets and lora_layers fields (analyst_recipe's too)."""
    from peft import LoraConfig

    return LoraConfig(
        r=recipe.lora_rank,
        lora_alpha=recipe.lora_alpha,
        lora_dropout=0.0,
        target_modules=list(recipe.lora_targets),
        layers_to_transform=list(recipe.lora_layers),
        task_type="CAUSAL_LM",
    )


def grpo_config(
    out: Path, steps: int, recipe: Recipe = RECIPE, temperature: float | None = None
) -> Any:
    """TRL's GRPOConfig for the CPU run."""
    from trl import GRPOConfig

    rollouts = recipe.generations * recipe.prompts_per_step
    return GRPOConfig(
        output_dir=str(out), max_steps=steps,
        per_device_train_batch_size=rollouts, num_generations=recipe.generations,
        max_completion_length=recipe.max_completion_tokens,
        learning_rate=recipe.learning_rate, beta=recipe.beta,
        temperature=recipe.temperature if temperature is None else temperature,
        max_tool_calling_iterations=1, use_cpu=True, report_to=[], logging_steps=1,
        save_strategy="no", seed=0,
    )  # fmt: skip
