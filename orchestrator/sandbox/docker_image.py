"""The Docker side of the analyst toolchain: the daemon, the base image and the
derived analyst image.

The analyst image is derived once per (base image, pin set) by installing the host-
fetched wheelhouse offline (the build runs with no network), so it needs neither a
registry mirror nor trust in a proxy's certificates inside the build.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import docker
import docker.errors
import requests.exceptions

from orchestrator.errors import SandboxUnavailableError, ToolchainError
from orchestrator.sandbox.toolchain import ensure_wheelhouse, pins_digest

AGENT_UID = 1000
LABEL = "causal-gym.sandbox"
DEFAULT_IMAGE = "python:3.11-slim"
#: The image's recipe, a real Dockerfile (BASE and AGENT_UID are its build arguments).
DOCKERFILE = Path(__file__).with_name("analyst.Dockerfile")
DOCKER_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except DOCKER_ERRORS as exc:
        raise SandboxUnavailableError(
            f"the Docker daemon is not reachable ({exc.__class__.__name__}): start it "
            "(systemctl start docker, or dockerd), check DOCKER_HOST, or use --sandbox local"
        ) from exc
    return client


def _ensure_base(client: docker.DockerClient, base: str) -> None:
    try:
        client.images.get(base)
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(base)
    except DOCKER_ERRORS as exc:
        raise SandboxUnavailableError(
            f"image {base!r} is not present and cannot be pulled ({str(exc)[:200]}): pull "
            "it, or pass --image with a local image (scripts/build_standin_images.sh "
            "builds a stand-in where Docker Hub is unreachable)"
        ) from exc


def analyst_image(client: docker.DockerClient, base: str) -> str:
    """`base` plus the pinned analyst venv at /opt/analyst, built once and reused."""
    recipe = DOCKERFILE.read_bytes()
    digest = hashlib.sha256(base.encode() + b"\0" + recipe).hexdigest()[:8]
    tag = f"causal-gym-analyst:{pins_digest()}-{digest}"
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    _ensure_base(client, base)
    wheels = ensure_wheelhouse()
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(recipe)
        tar.addfile(info, io.BytesIO(recipe))
        tar.add(str(wheels), arcname="wheels")
    context.seek(0)
    try:
        client.images.build(
            fileobj=context,
            custom_context=True,
            tag=tag,
            rm=True,
            forcerm=True,
            network_mode="none",
            buildargs={"BASE": base, "AGENT_UID": str(AGENT_UID)},
            labels={LABEL: "image"},
        )
    except docker.errors.BuildError as exc:
        log = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log)
        raise ToolchainError(f"building {tag} from {base} failed: {log[-1500:]}") from exc
    except DOCKER_ERRORS as exc:
        raise ToolchainError(f"building {tag} from {base} failed: {exc}") from exc
    return tag
