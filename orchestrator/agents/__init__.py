"""Agents: the host-side episode loop and the policies that drive it."""

from orchestrator.agents.episode import run_episode
from orchestrator.agents.loader import BUILTIN_AGENTS, AgentSpecError, load_policy
from orchestrator.agents.openai_policy import OpenAIPolicy, OpenAIPolicyConfig
from orchestrator.agents.policy import ModelError, Policy
from orchestrator.agents.types import (
    AgentTurn,
    EpisodeConfig,
    EpisodeResult,
    EpisodeStatus,
    ToolCall,
)

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
