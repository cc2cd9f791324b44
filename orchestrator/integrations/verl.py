"""causal-gym as a verl agent loop, registered under the name "causal_gym".

verl's AgentLoopWorker runs one agent loop per trajectory: it instantiates the class
registered under the row's `agent_name` and awaits `run()`, which talks to the rollout
server in token ids and returns the trajectory as an `AgentLoopOutput`. Here:

- the dataset row is a placeholder (`verl_dataset` writes the parquet); the task comes
  from the source (a stream, or a generator in this process) and its files go into a
  sandbox per trajectory;
- the conversation is the project's agents' own, with the tools listed in the system
  prompt and called as <tool_call> text (text_tools.py), so it does not depend on the
  model's chat template rendering tools;
- tokens: verl's own Continuous Token builder renders the messages and merges each
  generation and each tool response, so `response_mask` is 1 on what the model
  generated and 0 on the tool responses, and the server's log-probabilities line up
  with the 1s;
- the reward is the scorer's clipped reward of the one valid submission (-1 without),
  set as `reward_score`, so verl puts it on the last token and computes no other;
  the raw reward and the episode's counts go to `reward_extra_info`;
- GRPO: verl gives the `rollout.n` copies of a prompt one `uid`; the copies of a uid
  answer one task (groups.py). verl hands each agent-loop worker a contiguous slice of
  the batch, so a group stays in one worker (one board) when `data.train_batch_size`
  is a multiple of `rollout.agent.num_workers`; the loop refuses a config where not.

Settings are the agent-loop YAML's keys (settings.py: stream_url, token_file,
families, sandbox, max_turns), e.g. for `rollout.agent.agent_loop_config_path`:

    - name: causal_gym
      _target_: orchestrator.integrations.verl.CausalGymAgentLoop
      stream_url: http://head:8100
      token_file: /secrets/trainer.token

Install with `pip install "causal-gym[verl]"`.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from pathlib import Path
from typing import Any

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.utils.profiler import simple_timer

from orchestrator.errors import IntegrationError
from orchestrator.integrations.groups import BOARDS
from orchestrator.integrations.rows import placeholder_parquet
from orchestrator.integrations.session import TaskSession
from orchestrator.integrations.settings import adapter_settings
from orchestrator.integrations.text_tools import observation, system_prompt_with_tools

AGENT_NAME = "causal_gym"
#: The arguments verl's AgentLoopWorker passes every agent loop (besides `tools`).
VERL_ARGUMENTS = frozenset(inspect.signature(AgentLoopBase.__init__).parameters) - {
    "self",
    "kwargs",
}
#: What a placeholder row's `extra_info.split` may say: which group size applies.
SPLITS = ("train", "validation")


class CausalGymAgentLoop(AgentLoopBase):  # verl ships no types: AgentLoopBase is Any here
    """The agent loop verl makes per trajectory; the YAML's own keys are its settings,
    and a misspelt key or a batch that would split a group across workers is refused."""

    def __init__(self, *args: Any, tools: Any = None, **kwargs: Any) -> None:
        # verl's own arguments go to AgentLoopBase; every other key is the YAML's, and
        # a misspelt one is refused (AgentLoopBase would swallow it)
        kwargs.pop("name", None)  # the YAML entry's own name, which hydra passes on
        own = {k: kwargs.pop(k) for k in list(kwargs) if k not in VERL_ARGUMENTS}
        super().__init__(*args, **kwargs)
        self.settings = adapter_settings(own)
        if self.settings.group_size != 1:
            raise IntegrationError(
                "group_size is not a verl setting: verl's groups are rollout.n "
                "(rollout.val_kwargs.n when validating)"
            )
        rollout = self.rollout_config
        self.group_sizes = {"train": int(rollout.n), "validation": int(rollout.val_kwargs.n)}
        workers, batch = int(rollout.agent.num_workers), self.config.data.train_batch_size
        if self.group_sizes["train"] > 1 and batch is not None and int(batch) % workers:
            raise IntegrationError(
                f"data.train_batch_size ({batch}) must be a multiple of "
                f"rollout.agent.num_workers ({workers}): verl slices the batch by worker "
                "and a GRPO group must stay in one"
            )
        self.response_length = int(rollout.response_length)
        self._tokenizer: Any = self.tokenizer  # a transformers tokenizer (typed as its factory)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """One trajectory: the task of the row's `uid` group, played in a sandbox
        against verl's rollout server; returns its tokens, masks and reward."""
        split = str((kwargs.get("extra_info") or {}).get("split", "train"))
        if split not in SPLITS:
            raise IntegrationError(f"extra_info.split is {split!r}: accepted are {SPLITS}")
        board = BOARDS.get(self.settings, self.group_sizes[split])
        group = str(kwargs.get("uid") or uuid.uuid4().hex)
        io = asyncio.get_running_loop()
        task, handle = await io.run_in_executor(None, board.claim, group)
        session = TaskSession(board.source, self.settings.session_settings())
        try:
            await io.run_in_executor(None, session.start, task, handle)
            return await self._episode(session, sampling_params)
        finally:
            await io.run_in_executor(None, session.close)

    async def _episode(
        self, session: TaskSession, sampling_params: dict[str, Any]
    ) -> AgentLoopOutput:
        intro, user = session.messages[:2]
        system = system_prompt_with_tools(session.tools, str(intro["content"]))
        messages = [{"role": "system", "content": system}, user]
        ids = await self.ct_build_initial_tokens(messages)
        mask: list[int] = []
        logprobs: list[float] = []
        metrics: dict[str, Any] = {}
        request_id = uuid.uuid4().hex
        io = asyncio.get_running_loop()
        turns = 0
        while True:
            with simple_timer("generate_sequences", metrics):
                out = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=ids, sampling_params=sampling_params
                )
            turns += 1
            merged, mask, aligned = await self.ct_merge_assistant_token(
                ids,
                out.token_ids,
                mask,
                logprobs if (logprobs or out.log_probs) else None,
                assistant_logprobs=out.log_probs or None,
            )
            ids, logprobs = merged.token_ids, aligned or []
            text = str(self._tokenizer.decode(out.token_ids, skip_special_tokens=True))
            messages.append({"role": "assistant", "content": text})
            if len(mask) >= self.response_length:
                break
            with simple_timer("tool_calls", metrics):
                outputs = await io.run_in_executor(None, session.call_text, text)
            if session.done or turns >= self.settings.max_turns:
                break
            before = list(messages)
            messages.append({"role": "user", "content": observation(outputs)})
            merged, grown, aligned = await self.ct_merge_context_msg(
                before, messages, ids, mask, logprobs or None
            )
            if len(grown) >= self.response_length:
                break
            ids, mask, logprobs = merged.token_ids, grown, aligned or []
        return self._output(session, ids, mask, logprobs, turns, metrics)

    def _output(
        self,
        session: TaskSession,
        ids: list[int],
        mask: list[int],
        logprobs: list[float],
        turns: int,
        metrics: dict[str, Any],
    ) -> AgentLoopOutput:
        limit = self.response_length
        score = session.score
        info = {
            "reward_raw": session.raw_reward,
            "valid_submission": float(score is not None and score.valid),
            "invalid_attempts": float(session.invalid_attempts),
            "tool_calls": float(session.tool_calls),
            **({"reward_version": float(score.reward_version)} if score is not None else {}),
        }
        return AgentLoopOutput(
            prompt_ids=ids[: len(ids) - len(mask)],
            response_ids=ids[len(ids) - len(mask) :][:limit],
            response_mask=mask[:limit],
            response_logprobs=logprobs[:limit] if logprobs else None,
            reward_score=session.reward,
            num_turns=2 * turns,
            metrics=AgentLoopMetrics.model_validate(metrics),
            extra_fields={"turn_scores": [], "tool_rewards": [], "reward_extra_info": info},
        )


def _register() -> None:
    """Register under AGENT_NAME unless a YAML entry of that name is there already.
    verl's AgentLoopWorker loads the agent-loop YAML (with the settings) into its
    registry before hydra first imports this module, and verl's `register` replaces
    an entry: every trajectory after the first would have run on default settings."""
    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    if AGENT_NAME not in _agent_loop_registry:
        register(AGENT_NAME)(CausalGymAgentLoop)


_register()


def verl_dataset(path: str | Path, rows: int, split: str = "train") -> Path:
    """A parquet of `rows` placeholder prompts for verl's RLHFDataset (`data.train_files`
    or `data.val_files`): each names this agent loop and its split, and the loop fills
    in a task. Rows are slots, not tasks: an epoch of them is `rows` fresh tasks."""
    if split not in SPLITS:
        raise IntegrationError(f"verl_dataset's split is one of {SPLITS}, not {split!r}")
    return placeholder_parquet(
        path,
        rows,
        "the agent loop",
        lambda i: {
            "agent_name": AGENT_NAME,
            "reward_model": {"style": "causal_gym", "ground_truth": ""},
            "extra_info": {"split": split, "index": i},
        },
    )
