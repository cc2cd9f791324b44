"""Run a real `vf-eval causal_gym ...` against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.openai_server import Policy, ScriptedOpenAIServer, ServerScript

VENV_BIN = Path(sys.executable).parent


@dataclass
class VfRun:
    returncode: int
    stdout: str
    stderr: str
    out_dir: Path
    requests: list[dict[str, Any]]

    @property
    def episodes(self) -> list[dict[str, Any]]:
        path = self.out_dir / "run" / "traces.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_vf_eval(
    policy: Policy,
    out_dir: Path,
    args: list[str],
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> VfRun:
    base_env = {k: v for k, v in os.environ.items() if k != "CAUSAL_GYM_KEY"}
    base_env.update(
        {
            "SCRIPTED_API_KEY": "sk-scripted",
            "UV_NATIVE_TLS": "1",
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PRIME_RUNS_MODE": "disabled",
        }
    )
    base_env.update(env or {})
    with ScriptedOpenAIServer(ServerScript(policy)) as server:
        cmd = [
            str(VENV_BIN / "vf-eval"),
            "causal_gym",
            "--env.agent.harness.id",
            "bash",
            "-m",
            "scripted",
            "--client.base-url",
            server.base_url,
            "--client.api-key-var",
            "SCRIPTED_API_KEY",
            "--no-push",
            "--no-rich",
            "-o",
            str(out_dir),
            "--run.name",
            "run",
            *args,
        ]
        proc = subprocess.run(cmd, env=base_env, capture_output=True, text=True, timeout=timeout)
        return VfRun(proc.returncode, proc.stdout, proc.stderr, out_dir, list(server.chat_requests))
