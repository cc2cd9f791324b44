"""Drive a causal-gym OpenEnv server with OpenEnv's own client, in the OpenEnv
virtualenv (the tests' interpreter cannot import openenv: see scripts/setup_protocols.sh).

    .venv-openenv/bin/python tests/support/openenv_client.py SCENARIO WS_URL TOKEN_FILE

Prints one JSON object: what the scenario saw, everything the server sent included
(`wire`, for the tests' secret scans).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from openenv.core.generic_client import GenericEnvClient

from orchestrator.integrations.openenv_client import CausalGymEnv
from orchestrator.integrations.openenv_env import CausalGymAction

REFERENCE = Path(__file__).resolve().parents[2] / "causal_gym" / "reference"
#: The episode's kit run first waits this long, past the test server's 2 s idle
#: timeout: a tool call is not idle time (OpenEnv's own reaper once ended a session
#: under a slow call; openenv_server.IdleSessionClose says why).
LONG_CALL_S = 3


def client(url: str, token: str | None) -> GenericEnvClient:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    return GenericEnvClient(base_url=url, headers=headers, message_timeout_s=120)


def episode(url: str, token: str, kit_names: list[str]) -> dict[str, Any]:
    """With the typed client: reset; bash; python writing the family's reference kit
    (JSON text arguments, as a model writes them); the kit run on the staged file,
    slowly (LONG_CALL_S); a rejected submission; the reference answer; a step after
    the end. `kit_names` is the family's reference kit, answer.py last (the test reads
    its contract)."""
    seen: dict[str, Any] = {"wire": []}
    kit = {name: (REFERENCE / name).read_text() for name in kit_names}
    write_kit = f"for name, text in {kit!r}.items():\n    open(name, 'w').write(text)\nprint('kit')"

    def record(name: str, result: Any) -> Any:
        seen[name] = {"observation": result.observation.model_dump(mode="json"),
                      "reward": result.reward, "done": result.done}  # fmt: skip
        seen["wire"].append(seen[name])
        return result

    def step(env: Any, name: str, tool: str, arguments: Any) -> Any:
        return record(name, env.step(CausalGymAction(tool=tool, arguments=arguments)))

    with CausalGymEnv(url, token=token, message_timeout_s=120).sync() as env:
        record("reset", env.reset())
        step(env, "bash", "bash", {"command": "ls"})
        step(env, "python", "python", json.dumps({"code": write_kit}))
        run_kit = {"command": f"sleep {LONG_CALL_S}; python {kit_names[-1]} /workspace"}
        ran = step(env, "reference", "bash", run_kit)
        answer = json.loads(ran.observation.output.strip().splitlines()[-1])
        seen["answer"] = answer
        step(env, "rejected", "submit_answer", "{}")
        step(env, "valid", "submit_answer", answer)
        step(env, "after", "bash", {"command": "ls"})
        seen["state"] = env.state().model_dump(mode="json")
        seen["wire"].append(seen["state"])
    return seen


def analyst(url: str, token: str) -> dict[str, Any]:
    """With the typed client, an episode in the analyst toolset: reset asking for it; a
    fit of a column the task does not have (a tool error, the episode goes on); the fit
    of the pre-treatment columns; the report."""
    seen: dict[str, Any] = {}

    def record(name: str, result: Any) -> None:
        seen[name] = {"observation": result.observation.model_dump(mode="json"),
                      "reward": result.reward, "done": result.done}  # fmt: skip

    with CausalGymEnv(url, token=token, message_timeout_s=120).sync() as env:
        record("reset", env.reset(rendering="analyst"))
        fit = {"adjust_for": ["no_such_column"]}
        record("unknown", env.step(CausalGymAction(tool="fit", arguments=fit)))
        fit = {"adjust_for": ["pre_treatment"], "estimator": "ols"}
        record("fit", env.step(CausalGymAction(tool="fit", arguments=fit)))
        report = {"width": "standard"}
        record("report", env.step(CausalGymAction(tool="report", arguments=report)))
    return seen


def malformed(url: str, token: str) -> dict[str, Any]:
    """With the generic client: an action no tool accepts, then a good one in the same
    session (a bad message does not end it)."""
    seen: dict[str, Any] = {}
    with client(url, token).sync() as env:
        env.reset()
        unknown_tool = {"tool": "rm", "arguments": {}}
        extra_field = {"tool": "bash", "arguments": {}, "sudo": True}
        for name, action in (("unknown_tool", unknown_tool), ("extra_field", extra_field)):
            try:
                env.step(action)
                seen[name] = "accepted"
            except Exception as exc:
                seen[name] = f"{type(exc).__name__}: {exc}"
        seen["after"] = env.step({"tool": "bash", "arguments": {"command": "echo ok"}}).observation
    return seen


def refused(url: str, token: str | None) -> dict[str, Any]:
    """Whether a session opens at all without the token or with another."""
    try:
        with client(url, token).sync() as env:
            result = env.reset()
            return {"opened": True, "observation": result.observation}
    except Exception as exc:
        return {"opened": False, "error": f"{type(exc).__name__}: {exc}"}


async def _open(c: GenericEnvClient) -> str:
    """Connect and reset: "opened", or what the server said instead."""
    try:
        await c.connect()
        await c.reset()
        return "opened"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


async def crowd(url: str, token: str, sessions: int) -> dict[str, Any]:
    """`sessions` concurrent sessions, each reset; then one more after the first closed."""
    clients = [client(url, token) for _ in range(sessions)]
    outcomes = [await _open(c) for c in clients]
    await clients[0].close()
    late = client(url, token)
    outcomes.append(await _open(late))
    for c in [*clients[1:], late]:
        await c.close()
    return {"outcomes": outcomes}


async def idle(url: str, token: str, seconds: float) -> dict[str, Any]:
    """Reset, then say nothing for `seconds`, then try a step."""
    c = client(url, token)
    await c.connect()
    await c.reset()
    print(json.dumps({"reset": True}), flush=True)
    await asyncio.sleep(seconds)
    try:
        result = await c.step({"tool": "bash", "arguments": {"command": "ls"}})
        after: Any = result.observation
    except Exception as exc:
        after = f"{type(exc).__name__}: {exc}"
    await c.close()
    return {"after_idle": after}


def main() -> None:
    scenario, url, token_file = sys.argv[1:4]
    token = Path(token_file).read_text().strip() if token_file != "-" else None
    if scenario == "episode":
        out = episode(url, token or "", sys.argv[4:])
    elif scenario == "analyst":
        out = analyst(url, token or "")
    elif scenario == "malformed":
        out = malformed(url, token or "")
    elif scenario == "refused":
        out = refused(url, token)
    elif scenario == "crowd":
        out = asyncio.run(crowd(url, token or "", int(sys.argv[4])))
    else:
        out = asyncio.run(idle(url, token or "", float(sys.argv[4])))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
