"""The sandbox backends, one registration each: a name, what it is, and three entry
points ("module:callable", imported only when used, so `local` never needs the Docker
SDK): making a sandbox, preparing its toolchain once, and reaping what dead runs left.

Everything that names a backend (run configs, the CLIs, streams, the reaper) asks
this registry; a backend of another package registers with `register_backend`, and
`orchestrator.sandbox.conformance.check_backend(name)` checks it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.sandbox.base import Sandbox, SandboxLimits


@dataclass(frozen=True)
class Backend:
    name: str
    description: str
    #: (limits, image, run_id) -> a closed Sandbox.
    factory: str
    #: (image) -> a line saying what is ready (the toolchain, an image).
    setup: str
    #: (run_id) -> what was removed; raising OrchestratorError when the engine is down.
    reap: str


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> Backend:
    if not backend.name.isidentifier() or backend.name in _BACKENDS:
        raise ValueError(f"sandbox backend {backend.name!r}: not a new, plain name")
    _BACKENDS[backend.name] = backend
    return backend


def backend_names() -> tuple[str, ...]:
    return tuple(_BACKENDS)


def backend(name: str) -> Backend:
    """The backend of a name; a ValueError naming the accepted ones otherwise."""
    try:
        return _BACKENDS[name]
    except KeyError:
        accepted = ", ".join(_BACKENDS)
        raise ValueError(f"unknown sandbox {name!r}: accepted sandboxes are {accepted}") from None


def load(entry_point: str) -> Any:
    module, _, attribute = entry_point.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def make_sandbox(
    kind: str,
    limits: SandboxLimits | None = None,
    image: str | None = None,
    run_id: str | None = None,
) -> Sandbox:
    """A closed sandbox of `kind`; call `.open(files)` (or use it as a context manager
    after opening)."""
    sandbox: Sandbox = load(backend(kind).factory)(limits, image, run_id)
    return sandbox


register_backend(
    Backend(
        "local",
        "bubblewrap on this host: namespaces, cgroups, a read-only analyst venv",
        factory="orchestrator.sandbox.bubblewrap:LocalSandbox.create",
        setup="orchestrator.sandbox.bubblewrap:setup",
        reap="orchestrator.sandbox.reaper:reap_local_for_run",
    )
)
register_backend(
    Backend(
        "docker",
        "a container per sandbox on a Docker engine, no network, labelled and reaped",
        factory="orchestrator.sandbox.docker_backend:DockerSandbox.create",
        setup="orchestrator.sandbox.docker_backend:setup",
        reap="orchestrator.sandbox.docker_backend:reap_for_run",
    )
)
