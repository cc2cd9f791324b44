"""causal-gym as a SkyRL environment: a skyrl-gym `BaseTextEnv`, registered by id.

    from orchestrator.integrations.skyrl import register
    register()                                   # id "causal_gym"
    env = skyrl_gym.make("causal_gym", env_config={"stream_url": URL,
                         "token_file": PATH}, extras={"max_turns": 8})

SkyRL's generator makes one env per trajectory, calls `init(prompt)` with the dataset
row's prompt and then `step(completion)` until `done`. Here `init` ignores that
prompt (a dataset row is only a placeholder: the task comes from the source) and
starts the conversation the project's own agents start from, with the tools listed in
the system prompt; `step` runs the completion's <tool_call> blocks (text_tools.py) in
the task's sandbox. The reward is 0 until the episode ends, then the clipped reward
of the one valid submission (or -1), with the raw reward and its components in the
step's metadata and the env's metrics.

Settings (`env_config`, a dict or an OmegaConf node from SkyRL's config):
`stream_url` with `token_file` (or `token`) for a stream; neither for a generator in
this process under a fresh key (one machine); `families`, `sandbox`, `max_turns`;
`group_size` for GRPO. SkyRL's `generator.n_samples_per_prompt` samples of a row are
compared with each other, so they must answer one task: with rows from
`skyrl_dataset` (each has a `task_slot`, which reaches the env in `extras`) and
`group_size` set to n_samples_per_prompt, the envs of a slot share one task (one
source and board per process, groups.py). Without a slot every env is its own group.
Install with `pip install "causal-gym[skyrl]"`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from orchestrator.integrations.groups import BOARDS
from orchestrator.integrations.rows import placeholder_parquet
from orchestrator.integrations.session import TaskSession
from orchestrator.integrations.settings import adapter_settings
from orchestrator.integrations.text_tools import observation, system_prompt_with_tools

ENV_ID = "causal_gym"


class CausalGymEnv(BaseTextEnv):  # skyrl-gym ships no types: BaseTextEnv is Any here
    """One trajectory's env: the task claimed for its group, a sandbox holding the
    task's files, and the three tools."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        settings = adapter_settings(env_config)
        extras = extras or {}
        self.max_turns = int(extras.get("max_turns", settings.max_turns))
        # the dataset row's slot (skyrl_dataset writes one): the samples of a row are
        # one group; without a slot every env is a group of its own
        self.slot = extras.get("task_slot")
        size = settings.group_size if self.slot is not None else 1
        self.board = BOARDS.get(settings, size)
        self.source = self.board.source
        self.session = TaskSession(self.source, settings.session_settings())

    def init(self, prompt: Any = None) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Claim the task of this env's group and stage it in a sandbox; the
        conversation starts with the system prompt listing the tools and the task's user
        turn, not with SkyRL's prompt."""
        group = self.slot if self.slot is not None else uuid.uuid4().hex
        task = self.session.start(*self.board.claim(group))
        system, user = self.session.messages
        system = {
            "role": "system",
            "content": system_prompt_with_tools(self.session.tools, str(system["content"])),
        }
        return [system, user], {"family": task.family.value, "n_rows": task.n_rows}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run the completion's tool calls: the tools' output and reward 0 while the
        episode goes on, the clipped reward and the metrics when a valid submission or
        the last turn ends it."""
        self.turns += 1
        outputs = self.session.call_text(action)
        done = self.session.done or self.turns >= self.max_turns
        if done:
            self.session.close()
            return BaseTextEnvStepOutput(
                observations=[], reward=self.session.reward, done=True, metadata=self._metrics()
            )
        return BaseTextEnvStepOutput(
            observations=[{"role": "user", "content": observation(outputs)}],
            reward=0.0,
            done=False,
            metadata={"tool_calls": len(outputs)},
        )

    def _metrics(self) -> dict[str, Any]:
        session, score = self.session, self.session.score
        return {
            "reward_raw": session.raw_reward,
            "reward_clipped": session.reward,
            "valid_submission": float(score is not None and score.valid),
            "invalid_attempts": session.invalid_attempts,
            "turns": self.turns,
            **({"reward_version": score.reward_version} if score is not None else {}),
            **({"family": score.family} if score is not None else {}),
        }

    def get_metrics(self) -> dict[str, Any]:
        """The finished episode's numbers for SkyRL to average (all but the family, a string)."""
        return {k: v for k, v in self._metrics().items() if k != "family"}

    def close(self) -> None:
        """The sandbox goes; the source is the process's (groups.BOARDS), shared with
        the other envs of these settings."""
        self.session.close()


def register(env_id: str = ENV_ID) -> None:
    """Register the env with skyrl-gym (again: a no-op)."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_register(id=env_id, entry_point=f"{__name__}:CausalGymEnv")


def skyrl_dataset(path: str | Path, rows: int) -> Path:
    """A parquet of `rows` placeholder prompts for SkyRL's dataset: each names this env
    and carries a `task_slot` (a column SkyRL hands the env in `extras`), so the
    `generator.n_samples_per_prompt` samples of a row answer one task when
    `env_config.group_size` is that number. Rows are slots, not tasks."""
    return placeholder_parquet(
        path, rows, "the env", lambda i: {"env_class": ENV_ID, "task_slot": i}
    )
