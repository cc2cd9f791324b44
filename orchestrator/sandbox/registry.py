"""The sandbox backends, one registration each: a name, what it is, and three entry
points ("module:callable", imported only when used, so `local` never needs the Docker
SDK): making a sandbox, preparing its toolchain once, and reaping what dead runs left.

Everything that names a backend (run configs, the CLIs, streams, the reaper) asks
this registry (causal_gym.registries.Registry, like every plug-in kind). A backend of
another package is found by installing it, under the entry-point group
`causal_gym.sandboxes` (`name = "package.module:BACKEND"`, a `Backend`), or registered
at run time with `register_backend`; `orchestrator.sandbox.conformance.check_backend`
checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from causal_gym.registries import Registry, load_entry_point
from orchestrator.errors import UnknownSandboxError

if TYPE_CHECKING:
    from orchestrator.sandbox.base import Sandbox, SandboxLimits


@dataclass(frozen=True)
class Backend:
    """One backend's registration: its name, the line `--help` shows, and the entry
    points that make, set up and reap its sandboxes."""

    name: str
    description: str
    #: (limits, image, run_id) -> a closed Sandbox.
    factory: str
    #: (image) -> a line saying what is ready (the toolchain, an image).
    setup: str
    #: (run_id) -> what was removed; raising OrchestratorError when the engine is down.
    reap: str


def _accept(name: str, loaded: Any) -> Backend:
    if not isinstance(loaded, Backend) or loaded.name != name:
        raise UnknownSandboxError(f"sandbox {name!r}: {loaded!r} is not its Backend")
    return loaded


SANDBOXES: Registry[Backend] = Registry(
    "sandbox", "sandboxes", UnknownSandboxError, group="causal_gym.sandboxes", accept=_accept
)


def register_backend(backend: Backend) -> Backend:
    """Add a backend now (a name is registered once)."""
    if not backend.name.isidentifier():
        raise UnknownSandboxError(f"sandbox backend {backend.name!r}: not a plain name")
    SANDBOXES.register(backend.name, backend)
    return backend


def backend_names() -> tuple[str, ...]:
    """Every registered backend's name, the built-in ones first; listing them loads no
    backend."""
    return SANDBOXES.names()


def backend(name: str) -> Backend:
    """The backend of a name; UnknownSandboxError (a ValueError) naming the accepted
    ones otherwise."""
    return SANDBOXES.get(name)


def load(entry_point: str) -> Any:
    """What one of a backend's entry points names (imported only now)."""
    return load_entry_point(entry_point, UnknownSandboxError)


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
