"""The policies the registered agents make (agents/registry.py names these by entry
point). Each takes the `--agent` value, the OpenAI settings and the secret values a
user's process must not see; a parametrized agent has a check that raises
AgentSpecError for a bad value without starting anything."""

from __future__ import annotations

from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
from orchestrator.agents.policy import Policy
from orchestrator.agents.process_policy import ProcessPolicy
from orchestrator.agents.scripted import EscapePolicy, ProbePolicy, ReferencePolicy, SimulatedPolicy
from orchestrator.errors import AgentSpecError, PolicyProcessError

SIMULATED_FORMAT = "simulated:TURN_SECONDS:TURNS"
USER_AGENT_FORMAT = "python:PATH_OR_MODULE:ClassName"
Hidden = tuple[str, ...]


def openai(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    if config is None:
        raise AgentSpecError("the openai agent needs --base-url and --model")
    return OpenAIPolicy(config)


def reference(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    return ReferencePolicy()


def probe(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    return ProbePolicy(spec)


def escape(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    return EscapePolicy()


def check_simulated(spec: str) -> tuple[float, int]:
    try:
        _, seconds, turns = spec.split(":")
        turn_s, count = float(seconds), int(turns)
    except ValueError:
        raise AgentSpecError(
            f"simulated agents are given as {SIMULATED_FORMAT}, got {spec!r}"
        ) from None
    if not (0 <= turn_s <= 3600 and 1 <= count <= 1000):
        raise AgentSpecError(f"{spec!r}: turn seconds in [0, 3600] and turns in [1, 1000]")
    return turn_s, count


def simulated(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    return SimulatedPolicy(*check_simulated(spec))


def check_user_policy(spec: str) -> None:
    if spec.count(":") != 2 or not all(spec.split(":")):
        raise AgentSpecError(f"user agents are given as {USER_AGENT_FORMAT}, got {spec!r}")


def user_policy(spec: str, config: OpenAIPolicyConfig | None, hidden: Hidden) -> Policy:
    check_user_policy(spec)
    try:
        return ProcessPolicy(spec, hidden)
    except PolicyProcessError as exc:
        raise AgentSpecError(str(exc)) from exc
