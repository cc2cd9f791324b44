"""Fresh-key infinite task streams for RL trainers: a detached head actor per stream
(service.py), a client that connects by Ray address and stream name (client.py), and
the public types they exchange (types.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from causal_gym._lazy import lazy_exports

if TYPE_CHECKING:
    from orchestrator.stream.client import StreamClient
    from orchestrator.stream.service import StreamError
    from orchestrator.stream.types import EpisodeSettings, Rollout, StreamScore, StreamStats

__all__ = [
    "EpisodeSettings",
    "Rollout",
    "StreamClient",
    "StreamError",
    "StreamScore",
    "StreamStats",
]
_TYPES = "orchestrator.stream.types"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "EpisodeSettings": _TYPES,
        "Rollout": _TYPES,
        "StreamClient": "orchestrator.stream.client",
        "StreamError": "orchestrator.stream.service",
        "StreamScore": _TYPES,
        "StreamStats": _TYPES,
    },
)
