"""A real stream service for tests: `causal-gym-run stream start` on 127.0.0.1 (its own
embedded Ray), real HTTP, stopped by its operator and then by pid if need be."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUN = str(Path(sys.executable).with_name("causal-gym-run"))


def stream_cli(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in (env or os.environ).items() if k != "CAUSAL_GYM_KEY"}
    return subprocess.run(
        [RUN, "stream", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@dataclass
class Stream:
    name: str
    state_dir: Path
    url: str
    pid: int
    key_fingerprint: str
    #: The operator listener (loopback; its own port).
    operator_url: str

    @property
    def operator_token(self) -> str:
        return (self.state_dir / "operator.token").read_text().strip()

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        command, *rest = args
        return stream_cli(*command.split(), self.name, *rest, "--state-dir", str(self.state_dir))

    def mint(self, consumer: str, *options: str) -> str:
        minted = self.cli("token mint", consumer, *options)
        assert minted.returncode == 0, minted.stderr
        return minted.stdout.strip()

    def client(self, token: str, **options: Any) -> Any:
        from orchestrator.stream.client import StreamClient

        return StreamClient(self.url, token, **options)

    def operator(self) -> Any:
        from orchestrator.stream.client import StreamOperator

        return StreamOperator(self.operator_url, self.operator_token)

    def log(self) -> str:
        return (self.state_dir / "serve.log").read_text(errors="replace")

    def audit(self) -> list[dict[str, Any]]:
        """The stream's audit log, one record a line."""
        text = (self.state_dir / "audit.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stop(self) -> None:
        self.cli("stop")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _alive(self.pid):
            time.sleep(0.2)
        if _alive(self.pid):
            os.killpg(self.pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_stream(
    name: str, state_dir: Path, *options: str, env: dict[str, str] | None = None
) -> Stream:
    """A stream on its own embedded Ray, or on a cluster (`--address` in `options`, and
    the cluster's environment in `env`)."""
    started = stream_cli(
        "start", name, "--state-dir", str(state_dir), "--port", "0", *options, env=env
    )
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    return Stream(
        name, state_dir, info["url"], info["pid"], info["key_fingerprint"], info["operator_url"]
    )
