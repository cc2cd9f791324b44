"""The analyst toolchain agents compute with: Python 3.11 plus pinned wheels.

The pins live in one file (configs/analyst-requirements.txt, shipped inside the
causal_gym package). Wheels are downloaded once per pin set with the host's pip (so
its index, proxy and certificate settings apply) into a wheelhouse; the bubblewrap
toolchain (a venv) and the Docker analyst image both install from that wheelhouse
offline. Everything is cached under a directory keyed by the pins' digest and
built under a file lock, so concurrent runs build once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from orchestrator.errors import ToolchainError

TOOLCHAIN_MODULES = ("numpy", "pandas", "scipy", "statsmodels", "sklearn")
PYTHON_VERSION = "3.11"


def pins_bytes() -> bytes:
    return resources.files("causal_gym").joinpath("analyst-requirements.txt").read_bytes()


def pins_digest() -> str:
    return hashlib.sha256(pins_bytes()).hexdigest()[:16]


def cache_root() -> Path:
    explicit = os.environ.get("CAUSAL_GYM_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "causal-gym"


@contextmanager
def build_lock(name: str) -> Iterator[None]:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(argv: list[str], what: str, timeout: float = 1800) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainError(f"{what} failed: {exc}") from exc
    if done.returncode != 0:
        raise ToolchainError(
            f"{what} failed (exit {done.returncode}): {done.stderr.strip()[-1500:]}"
        )
    return done.stdout


def analyst_python() -> str:
    """A Python 3.11 interpreter to base the local toolchain on."""
    candidates = [getattr(sys, "_base_executable", sys.executable), shutil.which("python3.11")]
    for candidate in candidates:
        if not candidate:
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 11)":
            return candidate
    raise ToolchainError(
        "the analyst toolchain needs a Python 3.11 interpreter: install python3.11 "
        "(apt-get install python3.11 python3.11-venv) or run causal-gym-run with it"
    )


def ensure_wheelhouse() -> Path:
    """Every wheel the pins need, for CPython 3.11 on this platform, downloaded once."""
    target = cache_root() / f"wheelhouse-{pins_digest()}"
    if (target / ".complete").exists():
        return target
    with build_lock(f"wheelhouse-{pins_digest()}"):
        if (target / ".complete").exists():
            return target
        staging = Path(tempfile.mkdtemp(prefix=".wheelhouse-", dir=cache_root()))
        try:
            (staging / "requirements.txt").write_bytes(pins_bytes())
            _run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--only-binary=:all:",
                    "--python-version",
                    PYTHON_VERSION,
                    "--implementation",
                    "cp",
                    "--dest",
                    str(staging),
                    "--requirement",
                    str(staging / "requirements.txt"),
                ],
                "downloading the analyst wheels (pip download)",
            )
            (staging / ".complete").write_text("ok\n")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


@dataclass(frozen=True)
class LocalToolchain:
    """A venv with the pinned wheels plus the base interpreter it runs on."""

    venv: Path
    base_prefix: Path
    site_packages_to_hide: tuple[Path, ...]


def _describe(venv: Path) -> LocalToolchain:
    meta = json.loads((venv / ".complete").read_text())
    return LocalToolchain(venv, Path(meta["base_prefix"]), tuple(Path(p) for p in meta["hide"]))


_PROBE = (
    "import json, site, sys, sysconfig; "
    "paths = {sysconfig.get_path('purelib', 'posix_prefix', {'base': sys.base_prefix}), "
    "'/usr/lib/python3/dist-packages', '/usr/local/lib/python3.11/dist-packages', "
    "'/usr/local/lib/python3.11/site-packages'}; "
    "print(json.dumps({'base_prefix': sys.base_prefix, 'hide': sorted(paths)}))"
)


def ensure_local_toolchain() -> LocalToolchain:
    """The bubblewrap toolchain: a Python 3.11 venv (without the host's site-packages)
    holding the pinned wheels, built once per pin set."""
    venv = cache_root() / f"analyst-{pins_digest()}" / "venv"
    if (venv / ".complete").exists():
        return _describe(venv)
    wheels = ensure_wheelhouse()
    with build_lock(f"analyst-{pins_digest()}"):
        if (venv / ".complete").exists():
            return _describe(venv)
        if venv.exists():
            shutil.rmtree(venv)
        venv.parent.mkdir(parents=True, exist_ok=True)
        _run([analyst_python(), "-m", "venv", str(venv)], "creating the analyst venv")
        python = str(venv / "bin" / "python")
        _run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-index",
                "--find-links",
                str(wheels),
                "--requirement",
                str(wheels / "requirements.txt"),
            ],
            "installing the analyst wheels",
        )
        _run([python, "-c", "import " + ", ".join(TOOLCHAIN_MODULES)], "checking the toolchain")
        meta = json.loads(_run([python, "-c", _PROBE], "describing the toolchain"))
        (venv / ".complete").write_text(json.dumps(meta) + "\n")
    return _describe(venv)
