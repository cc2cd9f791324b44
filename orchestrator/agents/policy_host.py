"""The child side of a user policy (`--agent python:PATH_OR_MODULE:ClassName`).

A user's class is arbitrary code. It runs here, in its own process, never in the
runner that holds the key and the generated task's truth: the runner starts this
module with the key removed from the environment (and, as root, under an
unprivileged uid of its own), sends it only the public task and the conversation,
and reads back turns. One JSON object per line each way:

    -> {"op": "load", "spec": ..., "source": ... | null}
    <- {"ok": true} | {"ok": false, "kind": "spec", "error": ...}
    -> {"op": "begin", "task": {...public...}, "tools": [...]}
    <- {"ok": true}
    -> {"op": "next_turn", "messages": [...], "deadline_s": S}
    <- {"ok": true, "turn": {...}} | {"ok": false, "kind": "model"|"timeout"|"agent", ...}
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from typing import Any

from causal_gym.wire import TaskWire
from orchestrator.agents.policy import Policy
from orchestrator.agents.types import AgentTurn
from orchestrator.errors import ModelError, SpecError


def load_class(spec: str, source: str | None) -> type[Policy]:
    """The Policy subclass a spec names; a file's source comes from the parent (which
    can read it even when this process's uid cannot)."""
    parts = spec.split(":")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        raise SpecError(f"user agents are given as python:PATH_OR_MODULE:ClassName, got {spec!r}")
    _, where, class_name = parts
    try:
        if source is not None:
            stem = where.rsplit("/", 1)[-1].removesuffix(".py")
            module = types.ModuleType(f"user_agent_{stem}")
            module.__file__ = where
            sys.modules[module.__name__] = module
            exec(compile(source, where, "exec"), module.__dict__)
        else:
            module = importlib.import_module(where)
    except BaseException as exc:  # SystemExit too: loading is the user's code
        raise SpecError(
            f"cannot load {where!r} for agent {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Policy)):
        raise SpecError(
            f"{class_name!r} in {where!r} is not a subclass of orchestrator.agents.Policy"
        )
    return cls


def _turn_json(turn: AgentTurn) -> dict[str, Any]:
    return {
        "text": turn.text,
        "tool_calls": [[c.id, c.name, c.arguments] for c in turn.tool_calls],
        "usage": turn.usage,
        "retries": turn.retries,
    }


def serve(stdin: Any, stdout: Any) -> None:
    """Answer the runner's requests, one JSON line each way, until stdin ends; whatever
    the user's class raises is a reply, never a crash of this process."""
    policy: Policy | None = None

    def reply(payload: dict[str, Any]) -> None:
        stdout.write(json.dumps(payload) + "\n")
        stdout.flush()

    for line in stdin:
        request = json.loads(line)
        op = request.get("op")
        try:
            if op == "load":
                cls = load_class(request["spec"], request.get("source"))
                policy = cls()
                policy.name = request["spec"]
                reply({"ok": True})
            elif op == "begin" and policy is not None:
                policy.begin(TaskWire.model_validate(request["task"]), request["tools"])
                reply({"ok": True})
            elif op == "next_turn" and policy is not None:
                turn = policy.next_turn(request["messages"], float(request["deadline_s"]))
                reply({"ok": True, "turn": _turn_json(turn)})
            else:
                reply({"ok": False, "kind": "agent", "error": f"unexpected request {op!r}"})
        except SpecError as exc:
            reply({"ok": False, "kind": "spec", "error": str(exc)})
        except ModelError as exc:
            reply(
                {
                    "ok": False,
                    "kind": "model",
                    "error": str(exc),
                    "retries": exc.retries,
                    "transient": exc.transient,
                }
            )
        except TimeoutError as exc:
            reply({"ok": False, "kind": "timeout", "error": str(exc)})
        except Exception as exc:
            reply({"ok": False, "kind": "agent", "error": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    out = sys.stdout
    sys.stdout = sys.stderr  # the user's prints must not corrupt the protocol
    serve(sys.stdin, out)
