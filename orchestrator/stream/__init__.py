"""Fresh-key infinite task streams for RL trainers, served over HTTP.

The service runs on the head: server.py starts it, listeners.py and gate.py are what a
request passes (the consumer and operator listeners, their caps and header timeout, the
token), app.py the routes, service.py, handout.py, ledger.py and episodes.py the work,
audit.py its audit log, secrets.py where an endpoint key may be read. Supply workers
(supply.py) are the only processes that hold a stream's key and its truths. Trainers
use the client (client.py: httpx and pydantic only) with a consumer token; the operator
uses `causal-gym-run stream ...` or `StreamOperator`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causal_gym._lazy import lazy_exports

#: What a stream serves unless told otherwise (`stream start`, the trainer adapters'
#: local source): the families of eval-v1, with their expert share.
DEFAULT_SPLIT = "eval-v1"


def default_families() -> tuple[str, ...]:
    from causal_gym.contracts.families import split_families

    return split_families(DEFAULT_SPLIT)


if TYPE_CHECKING:
    from orchestrator.errors import StreamError
    from orchestrator.stream.client import AsyncStreamClient, StreamClient, StreamOperator
    from orchestrator.stream.types import (
        ConsumerCounters,
        Rollout,
        StreamScore,
        StreamStats,
        TaskGroup,
    )

__all__ = [
    "AsyncStreamClient",
    "ConsumerCounters",
    "Rollout",
    "StreamClient",
    "StreamError",
    "StreamOperator",
    "StreamScore",
    "StreamStats",
    "TaskGroup",
]
_TYPES = "orchestrator.stream.types"
_CLIENT = "orchestrator.stream.client"
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AsyncStreamClient": _CLIENT,
        "ConsumerCounters": _TYPES,
        "Rollout": _TYPES,
        "StreamClient": _CLIENT,
        "StreamError": "orchestrator.stream.errors",
        "StreamOperator": _CLIENT,
        "TaskGroup": _TYPES,
        "StreamScore": _TYPES,
        "StreamStats": _TYPES,
    },
)
