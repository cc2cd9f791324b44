"""A user's policy class run in a child process that holds neither the key nor a truth.

The runner generates tasks with the key and scores them against the hidden truth; a
user's class running in that process could read both (the environment, or
`gc.get_objects()`). So `--agent python:...` starts `policy_host` in a child:

- its environment is the runner's minus CAUSAL_GYM_KEY (and minus any variable whose
  value is the key);
- as root it runs under a fresh unprivileged uid (setpriv, no new privileges), so it
  cannot read the runner's /proc/<pid>/environ or memory; unprivileged it runs in
  its own user and pid namespaces (bubblewrap), which hide the runner's /proc;
- it receives the public task and the conversation only, over a pipe;
- each reply has a deadline: a child that ignores it is killed and the turn times out.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from causal_gym.wire import TaskWire
from orchestrator.agents.policy import Policy
from orchestrator.agents.types import AgentTurn, ToolCall
from orchestrator.errors import ModelError, PolicyProcessError

KEY_ENV_VAR = "CAUSAL_GYM_KEY"
#: Longest reply line accepted from the child (a turn is text and tool calls).
MAX_REPLY_BYTES = 16 * 1024 * 1024
LOAD_TIMEOUT_S = 60.0
_UID_BASE = 3_000_000


def child_environment(environ: Mapping[str, str], secrets_: tuple[str, ...] = ()) -> dict[str, str]:
    """The runner's environment without the key, under any name."""
    hidden = {s.strip().lower() for s in secrets_ if s.strip()}
    env = {}
    for name, value in environ.items():
        if name == KEY_ENV_VAR or value.strip().lower() in hidden:
            continue
        env[name] = value
    return env


def _code_paths() -> list[Path]:
    """What the policy host imports: the interpreter, the virtualenv, this project."""
    project = Path(__file__).resolve().parents[2]
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), project}
    return sorted(paths)


#: Covered by empty tmpfs mounts in the policy's view: /root (the runner's caches) and
#: the shared scratch places, so the policy gets a private /tmp (nothing carried from
#: one attempt to the next, no other run's folder under /tmp in sight).
HIDDEN_ROOTS = (Path("/root"), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def _reachable(paths: list[Path], hidden: tuple[Path, ...] = HIDDEN_ROOTS) -> list[str]:
    """The bwrap arguments that cover each of `hidden` with an empty 0755 tmpfs, and
    let the policy reach `paths` read-only even when they lie under a hidden root or an
    ancestor closed to its uid (a checkout under `mktemp -d`, mode 0700): that ancestor
    is covered too, open directories are made down to each path, and the path is bound
    back inside. Nothing else under a covered directory becomes visible."""
    args: list[str] = []
    covered: set[Path] = set()
    for root in hidden:
        args += ["--perms", "0755" if root != Path("/tmp") else "1777", "--tmpfs", str(root)]
        covered.add(root)
    for path in paths:
        closed = next((root for root in hidden if path.is_relative_to(root)), None)
        if closed is None:
            closed = next(
                (
                    a
                    for a in reversed(path.parents)
                    if a != Path("/") and not a.stat().st_mode & 0o001
                ),
                None,
            )
        if closed is None:
            continue
        if closed not in covered:
            args += ["--perms", "0755", "--tmpfs", str(closed)]
            covered.add(closed)
        for between in reversed(path.parents):  # bwrap would copy their closed modes
            if between.is_relative_to(closed) and between != closed:
                args += ["--perms", "0755", "--dir", str(between)]
        args += ["--ro-bind", str(path), str(path)]
    return args


def _launcher() -> list[str]:
    """The bubblewrap command: the host's filesystem but a pid namespace of its own (the
    runner's /proc is out of sight) and private scratch places (HIDDEN_ROOTS) except
    the interpreter and this project; as root, the policy also drops to an unprivileged
    uid of its own, so run folders (0700) and the runner's memory are closed to it."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise PolicyProcessError(
            "user policies run isolated from the runner and need bubblewrap: "
            "apt-get install bubblewrap"
        )
    args = [bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc", "--die-with-parent"]
    args += _reachable(_code_paths())
    if os.geteuid() != 0:
        return [*args, "--unshare-user", "--"]
    uid = _UID_BASE + secrets.randbelow(1_000_000)
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs"]
    return [*args, "--", *drop, "--"]


class ProcessPolicy(Policy):
    def __init__(self, spec: str, hidden_values: tuple[str, ...] = ()) -> None:
        self.name = spec
        where = spec.split(":")[1] if spec.count(":") == 2 else ""
        source = None
        if where.endswith(".py") or "/" in where:
            path = Path(where)
            if not path.is_file():
                raise PolicyProcessError(f"no Python file at {where!r} for agent {spec!r}")
            source = path.read_text("utf-8")
        argv = [*_launcher(), sys.executable, "-m", "orchestrator.agents.policy_host"]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=child_environment(os.environ, hidden_values),
                cwd="/",
                start_new_session=True,
            )
        except OSError as exc:
            raise PolicyProcessError(f"cannot start the policy process: {exc}") from exc
        self._buffer = b""
        try:
            reply = self._ask({"op": "load", "spec": spec, "source": source}, LOAD_TIMEOUT_S)
        except (RuntimeError, TimeoutError) as exc:
            self.close()
            raise PolicyProcessError(f"agent {spec!r} did not load: {exc}") from exc
        if not reply.get("ok"):
            self.close()
            raise PolicyProcessError(str(reply.get("error", "the policy failed to load")))

    # --- the pipe -----------------------------------------------------------------
    def _ask(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        try:
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise RuntimeError(f"the policy process is gone ({self._exit()})") from exc
        line = self._read_line(time.monotonic() + timeout_s)
        try:
            reply: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RuntimeError("the policy process sent a reply that is not JSON") from exc
        return reply

    def _read_line(self, deadline: float) -> bytes:
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise TimeoutError("the user policy did not answer before the deadline")
                if not selector.select(left):
                    continue
                chunk = os.read(stdout.fileno(), 1 << 16)
                if not chunk:
                    raise RuntimeError(f"the policy process ended ({self._exit()})")
                self._buffer += chunk
                if len(self._buffer) > MAX_REPLY_BYTES:
                    self.close()
                    raise RuntimeError(f"the policy sent more than {MAX_REPLY_BYTES} bytes")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exit(self) -> str:
        code = self.proc.poll()
        return "still running" if code is None else f"exit code {code}"

    # --- Policy ---------------------------------------------------------------------
    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        request = {"op": "begin", "task": task.model_dump(mode="json"), "tools": tools}
        self._raise_for(self._ask(request, LOAD_TIMEOUT_S))

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        reply = self._ask(
            {"op": "next_turn", "messages": messages, "deadline_s": deadline_s}, deadline_s
        )
        self._raise_for(reply)
        turn = reply["turn"]
        calls = tuple(ToolCall(str(i), str(n), str(a)) for i, n, a in turn.get("tool_calls") or [])
        usage = turn.get("usage")
        return AgentTurn(
            text=turn.get("text") if isinstance(turn.get("text"), str) else None,
            tool_calls=calls,
            usage=usage if isinstance(usage, dict) else None,
            retries=int(turn.get("retries") or 0),
        )

    @staticmethod
    def _raise_for(reply: dict[str, Any]) -> None:
        if reply.get("ok"):
            return
        error = str(reply.get("error", "the policy failed"))
        kind = reply.get("kind")
        if kind == "model":
            raise ModelError(error, int(reply.get("retries") or 0), bool(reply.get("transient")))
        if kind == "timeout":
            raise TimeoutError(error)
        raise RuntimeError(error)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
