"""The stream's error (defined with the orchestrator's others in orchestrator/errors.py):
a request it cannot serve, with the HTTP status its code maps to."""

from __future__ import annotations

from orchestrator.errors import STATUS, StreamError, WorkerGone

__all__ = ["STATUS", "StreamError", "WorkerGone"]
