"""Sandboxes for agent commands: `local` (bubblewrap, the default) and `docker`."""

from __future__ import annotations

from orchestrator.sandbox.base import WORKSPACE, ExecResult, Sandbox, SandboxLimits

SANDBOX_KINDS: tuple[str, ...] = ("local", "docker")


def make_sandbox(
    kind: str,
    limits: SandboxLimits | None = None,
    image: str | None = None,
    run_id: str | None = None,
) -> Sandbox:
    """A closed sandbox of `kind`; call `.open(files)` (or use it as a context manager
    after opening). Engines load lazily so `local` never needs the Docker SDK."""
    if kind == "local":
        from orchestrator.sandbox.bubblewrap import LocalSandbox

        return LocalSandbox(limits)
    if kind == "docker":
        from orchestrator.sandbox.docker_backend import DockerSandbox
        from orchestrator.sandbox.docker_image import DEFAULT_IMAGE

        return DockerSandbox(limits, image or DEFAULT_IMAGE, run_id)
    raise ValueError(f"unknown sandbox {kind!r}: accepted sandboxes are {', '.join(SANDBOX_KINDS)}")


__all__ = ["SANDBOX_KINDS", "WORKSPACE", "ExecResult", "Sandbox", "SandboxLimits", "make_sandbox"]
