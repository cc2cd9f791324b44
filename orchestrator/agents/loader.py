"""Agent names -> policies: `openai`, the scripted agents, or a user's class."""

from __future__ import annotations

from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
from orchestrator.agents.policy import Policy
from orchestrator.agents.process_policy import PolicyProcessError, ProcessPolicy
from orchestrator.agents.scripted import EscapePolicy, ProbePolicy, ReferencePolicy
from orchestrator.errors import OrchestratorError

PROBE_AGENTS = ("diff-in-means", "post-treatment", "constant", "narrow")
BUILTIN_AGENTS = ("openai", "reference", *PROBE_AGENTS, "escape")
USER_AGENT_FORMAT = "python:PATH_OR_MODULE:ClassName"


class AgentSpecError(OrchestratorError, ValueError):
    """Raised while resolving an --agent value that names no usable policy."""


def load_policy(
    spec: str,
    openai_config: OpenAIPolicyConfig | None = None,
    hidden_values: tuple[str, ...] = (),
) -> Policy:
    """The policy an --agent value names. A user's class (`python:...`) runs in its
    own process (process_policy.py); `hidden_values` are secrets (the key's hex) that
    must not reach that process's environment under any variable name."""
    if spec == "openai":
        if openai_config is None:
            raise AgentSpecError("the openai agent needs --base-url and --model")
        return OpenAIPolicy(openai_config)
    if spec == "reference":
        return ReferencePolicy()
    if spec in PROBE_AGENTS:
        return ProbePolicy(spec)
    if spec == "escape":
        return EscapePolicy()
    if spec.startswith("python:"):
        if spec.count(":") != 2 or not all(spec.split(":")):
            raise AgentSpecError(f"user agents are given as {USER_AGENT_FORMAT}, got {spec!r}")
        try:
            return ProcessPolicy(spec, hidden_values)
        except PolicyProcessError as exc:
            raise AgentSpecError(str(exc)) from exc
    raise AgentSpecError(
        f"unknown agent {spec!r}: accepted agents are "
        f"{', '.join(BUILTIN_AGENTS)} or {USER_AGENT_FORMAT}"
    )
