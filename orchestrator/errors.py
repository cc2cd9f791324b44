"""The one error root of the orchestrator and its leaves (each says when it is raised)."""

from __future__ import annotations


class OrchestratorError(Exception):
    """Root of every error the orchestrator raises on purpose."""


class SandboxUnavailableError(OrchestratorError):
    """Raised while opening a sandbox whose engine is missing or down (bubblewrap not
    installed, Docker daemon unreachable, image absent); the message names the fix."""


class UnknownSandboxError(OrchestratorError, ValueError):
    """Raised when a sandbox backend is named that is not registered (the message names
    every registered one), or a registered entry does not lead to a backend."""


class ToolchainError(OrchestratorError):
    """Raised while building the analyst toolchain (wheel download, venv, image build)."""


class SandboxError(OrchestratorError):
    """Raised when an open sandbox misbehaves (staging, file access, a broken engine)."""


class SandboxPathError(SandboxError, ValueError):
    """Raised for a workspace path that escapes /workspace or is not a regular file."""


class AgentSpecError(OrchestratorError, ValueError):
    """Raised while resolving an --agent value that names no usable policy."""


class PolicyProcessError(OrchestratorError):
    """Raised when a user policy's process cannot be started or loaded (bad spec)."""


class ModelError(OrchestratorError):
    """Raised by a policy when its model server failed: `transient` when it kept
    failing in ways that may pass (5xx, 429, network) until the retry budget ran out,
    not when it refused the request itself (a retry would be refused again)."""

    def __init__(self, message: str, retries: int = 0, transient: bool = False) -> None:
        super().__init__(message)
        self.retries = retries
        self.transient = transient


class SpecError(OrchestratorError):
    """Raised while loading a spec that names no usable Policy subclass."""


class LocalModelError(OrchestratorError):
    """Raised when the local model server is not installed, fails to start or to answer."""


class IntegrationError(OrchestratorError):
    """A trainer adapter was configured or used in a way it does not accept."""


class DispatchError(OrchestratorError):
    """Raised when a run cannot go on (no actor could be placed, the scorer died)."""


class ClusterError(OrchestratorError):
    """Raised before any work when the cluster cannot run causal-gym."""


class ConfigError(OrchestratorError, ValueError):
    """Raised while reading a run config or flags that describe no possible run."""


class RunFolderError(OrchestratorError):
    """Raised before any work when --out holds another run or cannot be used."""


class StateFolderError(OrchestratorError):
    """Raised when the per-user state folder (private_state.py), or a folder made in it,
    is not private: a symlink, someone else's, or on a path others can change."""


class InspectLogError(OrchestratorError):
    """Raised when a run folder cannot be exported as an inspect_ai log (inspect_ai
    missing, or the folder unreadable)."""


#: Error codes and their HTTP statuses (the API's error bodies carry the code).
STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "too_many": 429,
    "unavailable": 503,
}


class StreamError(OrchestratorError, ValueError):
    """Raised for a stream request that cannot be served; `code` is one of STATUS."""

    def __init__(self, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.code = code if code in STATUS else "bad_request"

    @property
    def status(self) -> int:
        """The HTTP status this error is answered with."""
        return STATUS[self.code]


class WorkerGone(StreamError):
    """Raised inside the service when a supply worker's process is gone (its truths
    with it); to a caller it is an `unavailable` reply."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "unavailable")


class SandboxConformanceError(SandboxError):
    """Raised by orchestrator.sandbox.conformance when a backend breaks a promise every
    sandbox makes; the message names the check."""
