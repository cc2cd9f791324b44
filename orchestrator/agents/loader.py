"""Agent names -> policies: `openai`, the scripted agents, or a user's class."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path

from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
from orchestrator.agents.policy import Policy
from orchestrator.agents.scripted import EscapePolicy, ProbePolicy, ReferencePolicy
from orchestrator.errors import OrchestratorError

PROBE_AGENTS = ("diff-in-means", "post-treatment", "constant", "narrow")
BUILTIN_AGENTS = ("openai", "reference", *PROBE_AGENTS, "escape")
USER_AGENT_FORMAT = "python:PATH_OR_MODULE:ClassName"


class AgentSpecError(OrchestratorError, ValueError):
    """Raised while resolving an --agent value that names no usable policy."""


def _user_class(spec: str) -> type[Policy]:
    parts = spec.split(":")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        raise AgentSpecError(f"user agents are given as {USER_AGENT_FORMAT}, got {spec!r}")
    _, where, class_name = parts
    try:
        if where.endswith(".py") or "/" in where:
            path = Path(where).resolve()
            module_spec = importlib.util.spec_from_file_location(f"user_agent_{path.stem}", path)
            if module_spec is None or module_spec.loader is None or not path.exists():
                raise AgentSpecError(f"no Python file at {where!r} for agent {spec!r}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except AgentSpecError:
        raise
    except Exception as exc:
        raise AgentSpecError(
            f"cannot load {where!r} for agent {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Policy)):
        raise AgentSpecError(
            f"{class_name!r} in {where!r} is not a subclass of orchestrator.agents.Policy"
        )
    return cls


def load_policy(spec: str, openai_config: OpenAIPolicyConfig | None = None) -> Policy:
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
        policy = _user_class(spec)()
        policy.name = spec
        return policy
    raise AgentSpecError(
        f"unknown agent {spec!r}: accepted agents are "
        f"{', '.join(BUILTIN_AGENTS)} or {USER_AGENT_FORMAT}"
    )
