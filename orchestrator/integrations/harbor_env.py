"""A Harbor environment provider backed by the project's bubblewrap sandbox.

With it `harbor run` runs tasks exported by `causal-gym export harbor` where there is
no Docker daemon:

    harbor run -p DIR -a oracle -e orchestrator.integrations.harbor_env:BwrapEnvironment

Each Harbor environment is one LocalSandbox (orchestrator/sandbox/bubblewrap.py): the
same namespaces, dropped uid, cgroup and prlimit limits and cut network as every agent
sandbox. It builds no image: it reads the exported Dockerfile's role label and stands
in for that image. The agent's role gets the pinned analyst toolchain at /opt/analyst
(what the Dockerfile installs) and the staged files in /workspace (what it copies);
the verifier's gets the causal-gym that Harbor runs beside (its source bound
read-only, its interpreter as the toolchain) and `tests/` at /tests. Harbor's own
paths (/logs, /tests, /solution) are writable folders on the sandbox's tmpfs. Other
tasks are refused in one line: Docker is their way, and stays Harbor's default.

What it does not do: switch users (every command runs as the sandbox's own uid, as
an agent's tool calls do), or allow network (tasks that want it are refused). This
module imports `harbor` (Python 3.12) and is loaded only by Harbor, in .venv-harbor
(scripts/setup_protocols.sh).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.task.config import NetworkMode

from causal_gym.harbor import layout
from orchestrator.errors import SandboxError
from orchestrator.sandbox.base import SandboxLimits
from orchestrator.sandbox.bubblewrap import LocalSandbox
from orchestrator.sandbox.host_files import FileRefused, read_regular, write_atomic
from orchestrator.sandbox.toolchain import LocalToolchain, ensure_local_toolchain

#: Harbor's folders in the sandbox, each a writable place of its own tmpfs.
PLACES = {"/logs": "logs", "/tests": "tests", "/solution": "solution"}
#: A command Harbor runs without a timeout (its verifier) still ends by this.
DEFAULT_TIMEOUT_S = 1800.0
#: The verifier regenerates its task (the expert tier fits a flexible model to do so).
VERIFIER_MEMORY_MB = 4096
#: How deep a folder copied out is walked (what an agent made below is left).
MAX_DOWNLOAD_DEPTH = 32
#: The largest file copied out of a sandbox (what an agent wrote there).
MAX_DOWNLOAD_BYTES = 256 << 20
_LABEL = re.compile(rf'^LABEL\s+{re.escape(layout.ROLE_LABEL)}="?(\w+)"?\s*$', re.MULTILINE)


def exported_role(environment_dir: Path) -> str:
    """The role an exported task's Dockerfile declares; an error naming what is
    accepted for anything else."""
    dockerfile = environment_dir / "Dockerfile"
    found = _LABEL.search(dockerfile.read_text()) if dockerfile.is_file() else None
    if found is None or found.group(1) not in (layout.AGENT_ROLE, layout.VERIFIER_ROLE):
        raise SandboxError(
            f"BwrapEnvironment runs tasks written by `causal-gym export harbor` (their "
            f"Dockerfile has LABEL {layout.ROLE_LABEL}); {environment_dir} is not one: run "
            "it with Harbor's Docker environment"
        )
    return found.group(1)


def causal_gym_toolchain() -> tuple[LocalToolchain, Path]:
    """The interpreter the verifier scores with: the virtualenv of the causal-gym
    checkout this module comes from (its `.venv`), and that checkout's package folder."""
    import causal_gym

    package = Path(causal_gym.__file__).resolve().parent
    venv = package.parent / ".venv"
    config = venv / "pyvenv.cfg"
    if not config.is_file():
        raise SandboxError(f"no causal-gym virtualenv at {venv}: run scripts/bootstrap.sh")
    home = dict(line.split(" = ", 1) for line in config.read_text().splitlines() if " = " in line)
    return LocalToolchain(venv, Path(home["home"]).parent, ()), package


class BwrapEnvironment(BaseEnvironment):
    """Harbor's BaseEnvironment on a LocalSandbox (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._box: LocalSandbox | None = None
        super().__init__(*args, **kwargs)
        self._role = exported_role(self.environment_dir)

    @staticmethod
    def type() -> str:
        """Harbor's name for this kind of environment."""
        return "causal-gym-bwrap"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """What Harbor may ask of it: no network, nothing else."""
        return EnvironmentCapabilities(disable_internet=True)  # the sandbox has no network

    def _validate_definition(self) -> None:
        exported_role(self.environment_dir)

    # --- lifecycle ------------------------------------------------------------------
    async def start(self, force_build: bool) -> None:
        """Open the sandbox, stage the role's files, make Harbor's log folders."""
        if self.network_policy.network_mode != NetworkMode.NO_NETWORK:
            raise SandboxError("BwrapEnvironment has no network: the task must say no-network")
        await asyncio.to_thread(self._open)
        await self.ensure_dirs(self._mount_targets(writable_only=True))

    def _open(self) -> None:
        config = self.task_env_config
        memory_mb = config.memory_mb or SandboxLimits.memory_mb
        if self._role == layout.VERIFIER_ROLE:  # it generates the task again
            memory_mb = max(memory_mb, VERIFIER_MEMORY_MB)
        limits = SandboxLimits(memory_mb=memory_mb, cpus=float(config.cpus or 1))
        if self._role == layout.VERIFIER_ROLE:
            toolchain, package = causal_gym_toolchain()
            box = LocalSandbox(limits, toolchain, PLACES, read_only=(package,))
        else:
            box = LocalSandbox(limits, ensure_local_toolchain(), PLACES)
        box.open({})
        self._box = box
        if self._role == layout.AGENT_ROLE:
            self._copy_in(self.environment_dir / layout.STAGED_DIR, layout.WORKSPACE)
        else:  # the verifier image holds tests/ at /tests (`COPY . /tests/`)
            self._copy_in(self.environment_dir, layout.TESTS_DIR)

    async def stop(self, delete: bool) -> None:
        """Kill what runs and remove the sandbox (always: nothing is kept)."""
        box, self._box = self._box, None
        if box is not None:
            await asyncio.to_thread(box.close)

    # --- exec -----------------------------------------------------------------------
    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        """Run a shell command in the sandbox (as its uid, whatever `user` says); a
        timeout raises, as Harbor's own environments do."""
        box = self._opened()
        prefix = "".join(
            f"export {name}={shlex.quote(value)}; "
            for name, value in (self._merge_env(env) or {}).items()
        )
        if cwd:
            prefix += f"cd {shlex.quote(cwd)} && "
        timeout = float(timeout_sec) if timeout_sec else DEFAULT_TIMEOUT_S
        result = await asyncio.to_thread(box.exec, prefix + command, timeout)
        if result.timed_out:
            raise TimeoutError(f"command timed out after {timeout:.0f} s")
        return ExecResult(
            stdout=result.stdout, stderr=result.stderr, return_code=result.exit_code or 0
        )

    # --- files ----------------------------------------------------------------------
    def _opened(self) -> LocalSandbox:
        if self._box is None:
            raise SandboxError("the environment is not started")
        return self._box

    def _locate(self, path: str) -> tuple[Path, str]:
        """The host folder and the relative path of a path in the sandbox."""
        box = self._opened()
        assert box.scratch is not None
        pure = PurePosixPath(path if path.startswith("/") else f"{layout.WORKSPACE}/{path}")
        places = {layout.WORKSPACE: "workspace", "/tmp": "tmp", **PLACES}
        for top, place in places.items():
            if ".." not in pure.parts and (
                pure == PurePosixPath(top) or PurePosixPath(top) in pure.parents
            ):
                rel = pure.relative_to(top).as_posix()
                return box.scratch.place(place), "" if rel == "." else rel
        raise SandboxError(f"{path}: BwrapEnvironment holds files under {', '.join(places)} only")

    def _owner(self) -> tuple[int, int] | None:
        box = self._opened()
        return (box.uid, box.uid) if box.uid != os.geteuid() else None

    def _copy_in(self, source: Path, target: str) -> None:
        root, rel = self._locate(target)
        for path in sorted(source.rglob("*")):
            if path.is_file() and not path.is_symlink():
                inner = path.relative_to(source).as_posix()
                write_atomic(
                    root, f"{rel}/{inner}" if rel else inner, path.read_bytes(), self._owner()
                )

    def _copy_out(self, source: str, target: Path) -> None:
        """What the sandbox holds at `source` (a file, or a folder's files), copied to
        the host without following a link the agent made or reading past a bound."""
        root, rel = self._locate(source)
        top = root / rel
        if top.is_file() and not top.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read_regular(root, rel, MAX_DOWNLOAD_BYTES))
            return
        if not top.is_dir() or top.is_symlink():
            raise FileNotFoundError(f"{source} is not in the sandbox")
        for folder, dirs, names in os.walk(top, followlinks=False):
            if len(Path(folder).relative_to(top).parts) >= MAX_DOWNLOAD_DEPTH:
                dirs.clear()  # an agent's tree thousands of levels deep is not walked
            for name in names:
                inner = Path(folder, name).relative_to(root).as_posix()
                try:
                    data = read_regular(root, inner, MAX_DOWNLOAD_BYTES)
                except FileRefused:
                    continue  # a link, a FIFO, a device: not copied out
                out = target / Path(folder, name).relative_to(top)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        """Copy a host file in, owned by the sandbox's uid."""
        root, rel = self._locate(target_path)
        data = Path(source_path).read_bytes()
        await asyncio.to_thread(write_atomic, root, rel, data, self._owner())

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        """Copy a host folder's files in (Harbor's `docker cp src/. dst`)."""
        await asyncio.to_thread(self._copy_in, Path(source_dir), target_dir)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        """Copy a sandbox file out (a link the agent made is not followed)."""
        await asyncio.to_thread(self._copy_out, source_path, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        """Copy a sandbox folder's regular files out."""
        await asyncio.to_thread(self._copy_out, source_dir, Path(target_dir))
