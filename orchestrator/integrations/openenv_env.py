"""causal-gym as an OpenEnv `Environment`: one session is one task from a stream.

`reset` claims a fresh-key task from the stream and opens it in a sandbox of its own
(integrations/session.py, the same TaskSession every adapter wraps); `step` runs one
tool call (`bash`, `python` or `submit_answer`, with the project's argument checks,
output caps and sandbox; or, after `reset(rendering="analyst")`, the analyst
toolset's `fit` and `report`, integrations/analyst_tools.py); the first valid
submission ends the episode with the stream's clipped reward, and its components
travel in the observation's typed `score` field (a field of the observation, not
`metadata`, which some OpenEnv clients drop).

The server holds only a consumer token for the stream: the key and the truths stay in
the stream's supply workers, and a task arrives under an opaque handle, never its id.
This module imports `openenv` and is loaded only by the OpenEnv server
(openenv_server.py), which runs in its own virtualenv: openenv 0.10 needs fastmcp 3,
which caps mcp below 2.0, and verifiers 0.4 pins mcp 2.0.0.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any, Literal

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from orchestrator.agents.episode import clean_text
from orchestrator.integrations.session import SessionSettings, TaskSession
from orchestrator.integrations.sources import TaskSource
from orchestrator.stream.types import StreamScore

#: Tool calls an episode may make before it ends unscored (reward -1): a session holds
#: a sandbox, and a client that never submits should not hold it for ever.
DEFAULT_MAX_TOOL_CALLS = 64
#: What a step outside an episode gets (also every stateless `POST /step`).
NO_EPISODE = (
    "error: no episode in progress: episodes are WebSocket sessions at /ws; send reset first"
)


class CausalGymAction(Action):
    """One tool call: the tool's name and its JSON arguments (an object, or the JSON
    text a model wrote, which the tool checks as it would an agent's)."""

    tool: Literal["bash", "python", "submit_answer", "fit", "report"]
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class CausalGymObservation(Observation):
    """What the agent sees. After `reset`: the system prompt, the task prompt with the
    staged README (`prompt`, the user turn the project's agents get), the README alone
    and the tools as OpenAI function specs. After `step`: the tool's output; once the
    episode ends, `reward` is the clipped reward and `score` its components."""

    family: str = ""
    system_prompt: str = ""
    prompt: str = ""
    readme: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    output: str = ""
    tool_calls: int = 0
    score: StreamScore | None = None


class CausalGymState(State):
    """The episode's bookkeeping (no task id, no handle: neither is the agent's)."""

    family: str = ""
    tool_calls: int = 0
    invalid_attempts: int = 0
    done: bool = False


class CausalGymEnvironment(Environment[CausalGymAction, CausalGymObservation, CausalGymState]):
    """One WebSocket session's environment. The stream connection is opened at the
    first `reset`, so building one (as `create_app` does to read its class) costs
    nothing."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        make_source: Callable[[], TaskSource],
        settings: SessionSettings | None = None,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    ) -> None:
        super().__init__()
        self._make_source = make_source
        self._settings = settings or SessionSettings()
        self._max_tool_calls = max_tool_calls
        self._source: TaskSource | None = None
        self._session: TaskSession | None = None
        self._state = CausalGymState()

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        rendering: str | None = None,
        **kwargs: Any,
    ) -> CausalGymObservation:
        """The next task from the stream, in a fresh sandbox. `seed` is not used: every
        task comes from the stream's fresh key, and which one is the stream's choice.
        `rendering` "analyst" gives this episode the analyst toolset (fit and report)
        instead of the server's rendering; the stream must then serve seed families."""
        if rendering not in (None, "readme", "analyst"):
            raise ValueError("rendering is 'readme' or 'analyst'")
        self._end_session()
        if self._source is None:
            self._source = self._make_source()
        settings = self._settings
        if rendering is not None:
            settings = dataclasses.replace(settings, rendering=rendering)  # type: ignore[arg-type]
        session = TaskSession(self._source, settings)
        task = session.start()
        self._session = session
        self._state = CausalGymState(
            episode_id=episode_id or uuid.uuid4().hex, family=task.family.value
        )
        system, user = session.messages[:2]
        return CausalGymObservation(
            family=task.family.value,
            system_prompt=str(system["content"]),
            prompt=str(user["content"]),
            readme=task.readme,
            tools=session.tools,
        )

    def step(
        self, action: CausalGymAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CausalGymObservation:
        """Run one tool call; a valid submission, or the last call the budget allows,
        ends the episode (the sandbox is removed then, the score kept)."""
        session = self._session
        if session is None or self._state.done:
            return CausalGymObservation(
                done=self._state.done,
                reward=None,
                output=NO_EPISODE,
                tool_calls=self._state.tool_calls,
            )
        output = clean_text(session.call(action.tool, action.arguments))
        self._state.step_count += 1
        self._state.tool_calls = session.tool_calls
        self._state.invalid_attempts = session.invalid_attempts
        done = session.done or session.tool_calls >= self._max_tool_calls
        if done and not session.done:
            output += (
                f"\n\nThe episode ended: {self._max_tool_calls} tool calls without a valid "
                "submission (reward -1)."
            )
        if done:
            self._state.done = True
            session.close()
        return CausalGymObservation(
            done=done,
            reward=session.reward if done else None,
            family=self._state.family,
            output=output,
            tool_calls=session.tool_calls,
            score=session.score if done else None,
        )

    @property
    def state(self) -> CausalGymState:
        """The episode's counts (OpenEnv's `state` message and `/state`)."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """What `/metadata` says of the environment."""
        return EnvironmentMetadata(
            name="causal_gym",
            description=(
                "Causal inference from observational data: a fresh-key task from a "
                "causal-gym stream a session, tools bash, python and submit_answer."
            ),
            version="1",
        )

    def close(self) -> None:
        """Remove the sandbox and let go of the stream connection (an unscored handle
        simply expires on the stream)."""
        self._end_session()
        if self._source is not None:
            self._source.close()
            self._source = None

    def _end_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
