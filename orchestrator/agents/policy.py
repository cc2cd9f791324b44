"""The one interface every agent implements, model-backed or scripted."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from causal_gym.wire import TaskWire
from orchestrator.agents.types import AgentTurn


class Policy(ABC):
    """Produces the next assistant turn from the conversation so far.

    The episode loop owns tools, budgets and validation; a policy only decides what
    to say or which tools to call. `deadline_s` is the wall time left in the episode,
    which a model call must not outlive.
    """

    name: str = "policy"

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:  # noqa: B027
        """Called once before the first turn (optional)."""

    def on_turn(self, turn: int, max_turns: int) -> None:  # noqa: B027
        """Called before each turn with its number (1-based) and the turn budget, so a
        policy can act on its last turn (the openai agent can force the submission)."""

    @abstractmethod
    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        """The assistant's next message: text and/or tool calls."""

    def close(self) -> None:  # noqa: B027
        """Release what the policy holds (a process, a connection); idempotent."""

    def __enter__(self) -> Policy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
