"""Agents: the host-side episode loop and the policies that drive it.

Names load on first use, so `orchestrator.agents.types` (say) never pays for the
OpenAI client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causal_gym._lazy import lazy_exports

if TYPE_CHECKING:
    from orchestrator.agents.episode import run_episode
    from orchestrator.agents.loader import BUILTIN_AGENTS, load_policy
    from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
    from orchestrator.agents.policy import Policy
    from orchestrator.agents.types import (
        AgentTurn,
        EpisodeConfig,
        EpisodeResult,
        EpisodeStatus,
        ToolCall,
    )
    from orchestrator.errors import AgentSpecError, ModelError

_TYPES = "orchestrator.agents.types"
__all__ = [
    "BUILTIN_AGENTS",
    "AgentSpecError",
    "AgentTurn",
    "EpisodeConfig",
    "EpisodeResult",
    "EpisodeStatus",
    "ModelError",
    "OpenAIPolicy",
    "OpenAIPolicyConfig",
    "Policy",
    "ToolCall",
    "load_policy",
    "run_episode",
]
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BUILTIN_AGENTS": "orchestrator.agents.loader",
        "AgentSpecError": "orchestrator.agents.loader",
        "AgentTurn": _TYPES,
        "EpisodeConfig": _TYPES,
        "EpisodeResult": _TYPES,
        "EpisodeStatus": _TYPES,
        "ModelError": "orchestrator.agents.policy",
        "OpenAIPolicy": "orchestrator.agents.openai_policy",
        "OpenAIPolicyConfig": "orchestrator.agents.openai_policy",
        "Policy": "orchestrator.agents.policy",
        "ToolCall": _TYPES,
        "load_policy": "orchestrator.agents.loader",
        "run_episode": "orchestrator.agents.episode",
    },
)
