"""The one error root of the orchestrator and its leaves (each says when it is raised)."""

from __future__ import annotations


class OrchestratorError(Exception):
    """Root of every error the orchestrator raises on purpose."""


class SandboxUnavailableError(OrchestratorError):
    """Raised while opening a sandbox whose engine is missing or down (bubblewrap not
    installed, Docker daemon unreachable, image absent); the message names the fix."""


class ToolchainError(OrchestratorError):
    """Raised while building the analyst toolchain (wheel download, venv, image build)."""


class SandboxError(OrchestratorError):
    """Raised when an open sandbox misbehaves (staging, file access, a broken engine)."""


class SandboxPathError(SandboxError, ValueError):
    """Raised for a workspace path that escapes /workspace or is not a regular file."""
