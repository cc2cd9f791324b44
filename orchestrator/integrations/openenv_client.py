"""The typed OpenEnv client for a causal-gym OpenEnv server (openenv_server.py).

OpenEnv ships a client class beside each environment so a consumer gets the
environment's own types back; this is causal-gym's. It is OpenEnv's `EnvClient`, async
with a `.sync()` wrapper, and it needs only the stream consumer token the server was
started with, sent as a header:

    from orchestrator.integrations.openenv_client import CausalGymEnv
    from orchestrator.integrations.openenv_env import CausalGymAction

    with CausalGymEnv("http://127.0.0.1:8700", token=TOKEN).sync() as env:
        first = env.reset()                      # .observation.prompt, .readme, .tools
        step = env.step(CausalGymAction(tool="python", arguments={"code": "print(1)"}))
        done = env.step(CausalGymAction(tool="submit_answer", arguments={...}))
        done.reward, done.observation.score      # the stream's clipped reward and parts

Like openenv_env.py it imports `openenv` and runs in the OpenEnv virtualenv.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from orchestrator.integrations.openenv_env import (
    CausalGymAction,
    CausalGymObservation,
    CausalGymState,
)


class CausalGymEnv(EnvClient[CausalGymAction, CausalGymObservation, CausalGymState]):
    """OpenEnv's client with causal-gym's action, observation and state types."""

    def __init__(self, base_url: str, token: str, **kwargs: Any) -> None:
        headers = {**kwargs.pop("headers", {}), "Authorization": f"Bearer {token}"}
        super().__init__(base_url=base_url, headers=headers, **kwargs)

    def _step_payload(self, action: CausalGymAction) -> dict[str, Any]:
        return action.model_dump(exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CausalGymObservation]:
        # OpenEnv moves `reward` and `done` out of the observation on the wire.
        wire = {**payload.get("observation", {}), "reward": payload.get("reward")}
        observation = CausalGymObservation.model_validate(
            {**wire, "done": payload.get("done", False)}
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=observation.done
        )

    def _parse_state(self, payload: dict[str, Any]) -> CausalGymState:
        return CausalGymState.model_validate(payload)
