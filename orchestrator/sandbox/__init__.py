"""Sandboxes for agent commands, by backend (registry.py): `local` (bubblewrap, the
default) and `docker`; `conformance.py` checks any backend."""

from __future__ import annotations

from orchestrator.sandbox.base import WORKSPACE, ExecResult, Sandbox, SandboxLimits
from orchestrator.sandbox.registry import backend_names, make_sandbox

#: The registered backends' names (a backend registered later is in backend_names()).
SANDBOX_KINDS: tuple[str, ...] = backend_names()

__all__ = [
    "SANDBOX_KINDS",
    "WORKSPACE",
    "ExecResult",
    "Sandbox",
    "SandboxLimits",
    "backend_names",
    "make_sandbox",
]
