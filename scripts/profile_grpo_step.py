"""Where one GRPO step's time goes: TRL's GRPOTrainer through the project's TRL adapter,
on SmolLM2-135M-Instruct, with each phase of a step timed (wall and CPU seconds).

    python scripts/profile_grpo_step.py [--model runs/demo/sft] [--steps 2]
        [--generations 4] [--max-completion 96] [--json docs/demo/grpo_step_profile.json]
    python scripts/profile_grpo_step.py --recipe --model runs/demo/sft [--steps 3]

Without --recipe: the first demo's setup (the full rendering, full fine-tuning, the
given group size). With --recipe: grpo_recipe.py's (the brief rendering, LoRA, its
group size, completion cap and temperature).

The phases are TRL's own methods, wrapped in place (nothing in TRL is changed):
generation (`_generate_single_turn`, transformers' generate), the tool loop
(`_tool_call_loop`: the sandboxed tool calls and the generation after them), rewards
(`_calculate_rewards`: the scorer), the policy's and the reference's log-probabilities
(`_get_per_token_logps_and_entropies`, forward passes: for the loss they are inside
the backward phase's forward), the loss with its backward pass (`training_step` less
what it calls above), the optimizer step, and the environments' resets (a task pulled
and staged in a fresh sandbox). Prompt lengths are counted in tokens. The first step
pays for warm-up (thread pools, the first sandbox); the report gives each step.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from grpo_recipe import RECIPE, grpo_config, lora_config  # noqa: E402
from smollm2_demo import MAX_NEW_TOKENS, load_model, load_tokenizer  # noqa: E402

from causal_gym.task_id import EVAL_V1_FAMILIES  # noqa: E402
from orchestrator.integrations.session import SessionSettings  # noqa: E402
from orchestrator.integrations.sources import LocalSource  # noqa: E402
from orchestrator.integrations.trl import CausalGymTRL, RolloutEnvironment  # noqa: E402


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


class Clock:
    """Wall and CPU seconds per phase, per step; nested phases are subtracted from the
    phase that contains them, so the phases of a step add up to its time."""

    def __init__(self) -> None:
        self.steps: list[dict[str, list[float]]] = []
        self._stack: list[list[float]] = []

    def new_step(self) -> None:
        self.steps.append(defaultdict(lambda: [0.0, 0.0]))

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started = (time.perf_counter(), cpu())
        inner = [0.0, 0.0]
        self._stack.append(inner)
        try:
            yield
        finally:
            self._stack.pop()
            wall, used = time.perf_counter() - started[0], cpu() - started[1]
            own = self.steps[-1][name]
            own[0] += wall - inner[0]
            own[1] += used - inner[1]
            if self._stack:
                self._stack[-1][0] += wall
                self._stack[-1][1] += used

    def wrap(self, owner: Any, method: str, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return original(*args, **kwargs)

        setattr(owner, method, timed)


def profile(args: argparse.Namespace) -> dict[str, Any]:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    if args.model is None:  # TRL builds its reference model from a saved checkpoint
        args.model = args.out / "base"
        load_model(None).save_pretrained(args.model)
        load_tokenizer(None).save_pretrained(args.model)
    tok = load_tokenizer(args.model)
    clock = Clock()
    reset = RolloutEnvironment.reset

    def timed_reset(self: RolloutEnvironment, **row: Any) -> str:
        if not clock.steps:  # (the probe TRL makes at construction)
            return reset(self, **row)
        with clock.phase("environment reset"):
            return reset(self, **row)

    RolloutEnvironment.reset = timed_reset  # type: ignore[method-assign]
    settings = SessionSettings(rendering="brief" if args.recipe else "readme")
    generations = RECIPE.generations if args.recipe else args.generations
    spec = CausalGymTRL(
        LocalSource(EVAL_V1_FAMILIES), num_generations=generations, settings=settings
    )
    if args.recipe:
        config = grpo_config(args.out, args.steps, temperature=args.temperature)
    else:  # the first demo's setup: the "before" profile
        config = GRPOConfig(
            output_dir=str(args.out), max_steps=args.steps,
            per_device_train_batch_size=args.generations, num_generations=args.generations,
            max_completion_length=args.max_completion, learning_rate=2e-6, beta=0.04,
            temperature=args.temperature, max_tool_calling_iterations=1, use_cpu=True,
            report_to=[], logging_steps=1, save_strategy="no", seed=0,
        )  # fmt: skip
    trainer = GRPOTrainer(
        model=load_model(args.model),
        processing_class=tok,
        args=config,
        train_dataset=spec.train_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=spec.reward_funcs,
        peft_config=lora_config() if args.recipe else None,
    )
    prompt_tokens: list[int] = []
    generate = trainer._generate_single_turn

    def counted(prompt_ids: Any, *rest: Any, **kwargs: Any) -> Any:
        prompt_tokens.extend(len(p) for p in prompt_ids)
        return generate(prompt_ids, *rest, **kwargs)

    trainer._generate_single_turn = counted  # type: ignore[method-assign]
    for method, name in (
        ("_generate_single_turn", "generation"),
        ("_tool_call_loop", "tool loop"),
        ("_calculate_rewards", "rewards"),
        ("_get_per_token_logps_and_entropies", "log-probabilities"),
        ("training_step", "loss and backward"),
    ):
        clock.wrap(trainer, method, name)
    step_begin = trainer.training_step

    def step(*a: Any, **k: Any) -> Any:
        clock.new_step()
        return step_begin(*a, **k)

    trainer.training_step = step  # type: ignore[method-assign]
    trainer.create_optimizer()  # train() keeps an optimizer it already has
    clock.wrap(trainer.optimizer, "step", "optimizer")
    started = time.perf_counter()
    try:
        trainer.train()
    finally:
        spec.close()
    total = time.perf_counter() - started
    steps = [{name: {"wall_s": round(v[0], 2), "cpu_s": round(v[1], 2)} for name, v in s.items()}
             for s in clock.steps]  # fmt: skip
    return {
        "command": " ".join(["python", *sys.argv]),
        "model": str(args.model),
        "recipe": args.recipe,
        "temperature": config.temperature,
        "generations": generations,
        "max_completion_tokens": config.max_completion_length,
        "prompt_tokens_mean": statistics.fmean(prompt_tokens) if prompt_tokens else 0.0,
        "prompt_tokens_max": max(prompt_tokens, default=0),
        "train_wall_s": round(total, 1),
        "steps": steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="a checkpoint (default: base)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--max-completion", type=int, default=MAX_NEW_TOKENS)
    parser.add_argument("--out", type=Path, default=Path("runs/profile"))
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--recipe", action="store_true", help="grpo_recipe.py's setup")
    parser.add_argument("--temperature", type=float, default=RECIPE.temperature)
    args = parser.parse_args()
    if args.steps < 1 or args.generations < 2:
        parser.error("--steps is at least 1 and --generations at least 2")
    report = profile(args)
    text = json.dumps(report, indent=2) + "\n"
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
