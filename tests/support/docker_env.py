"""Docker availability for tests: skip on a developer machine without an engine,
fail loudly in CI (where `scripts/run_tests.sh` starts dockerd), never skip silently."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

IMAGE_ENV = "CAUSAL_GYM_TEST_IMAGE"
DEFAULT_IMAGE = "python:3.11-slim"


def docker_reachable() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "info"], capture_output=True, timeout=30)
    return probe.returncode == 0


def require_docker() -> str:
    """The image tests should run, or skip/fail depending on where we are."""
    if docker_reachable():
        return os.environ.get(IMAGE_ENV, DEFAULT_IMAGE)
    if os.environ.get("CI"):
        pytest.fail(
            "docker is not reachable, but CI must run the docker tests "
            "(scripts/run_tests.sh starts dockerd)"
        )
    pytest.skip("no docker engine on this machine (CI runs these tests)")
