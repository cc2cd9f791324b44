"""Scripted agents: the honest reference and the hack probes, as real agents.

They drive the same tool loop as a model: copy self-contained analysis code into the
sandbox with the python tool, run it with bash, and submit what it printed. So the
audit's claims (honest beats every probe) can be checked end to end, offline.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

from causal_gym.contracts.families import contract_of
from causal_gym.wire import TaskWire
from orchestrator.agents.policy import Policy
from orchestrator.agents.types import AgentTurn, ToolCall

ESCAPE_SCRIPT = Path(__file__).with_name("escape_script.py")


def _reference_source(name: str) -> str:
    """The self-contained analyst files, read from disk without importing the package
    (its __init__ loads pandas; the worker side needs only the text)."""
    spec = importlib.util.find_spec("causal_gym.reference")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("causal_gym.reference is not installed")
    return (Path(spec.origin).parent / name).read_text("utf-8")


def _write_file_code(filename: str, source: str) -> str:
    return f"open({filename!r}, 'w').write({source!r})\nprint('wrote {filename}')"


def _call(turn: int, name: str, arguments: dict[str, Any]) -> AgentTurn:
    return AgentTurn(text=None, tool_calls=(ToolCall(f"call_{turn}", name, json.dumps(arguments)),))


def last_json_object(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last JSON object line printed by a tool, if any."""
    for message in reversed(messages):
        if message.get("role") != "tool":
            continue
        for line in reversed(str(message.get("content", "")).splitlines()):
            line = line.strip()
            if line.startswith("{") and line.endswith("}"):
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(value, dict):
                    return value
        return None
    return None


class ScriptedAnalysisPolicy(Policy):
    """Copy the family's kit (and a probe script), run one command, submit its printed
    JSON."""

    name = "scripted"
    command = "python answer.py /workspace"
    files: tuple[str, ...] = ("analyst.py", "answer.py")

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step < len(self.files):
            name = self.files[step]
            return _call(step, "python", {"code": _write_file_code(name, _reference_source(name))})
        if step == len(self.files):
            return _call(step, "bash", {"command": self.command})
        answer = last_json_object(messages)
        if step == len(self.files) + 1 and answer is not None:
            return _call(step, "submit_answer", answer)
        return AgentTurn(text="The analysis produced no answer; giving up.")


class ReferencePolicy(ScriptedAnalysisPolicy):
    name = "reference"

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        self.files = contract_of(task.family).reference_kit


class ProbePolicy(ScriptedAnalysisPolicy):
    """A hack probe: the kit files and command the task's family's contract names for
    it (FamilyContract.probe_run). A probe that does not answer the task's family
    exits with a message and the agent gives up."""

    def __init__(self, probe: str) -> None:
        self.name = probe
        self.command = f"python probes.py /workspace --probe {probe}"

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        self.files, self.command = contract_of(task.family).probe_run(self.name)


class EscapePolicy(Policy):
    """Tries the network, the key, the generator and host files; reports its findings
    as its final note and submits a constant answer."""

    name = "escape"
    family = "ate"
    estimands: tuple[str, ...] = ("ate",)

    def __init__(self, targets: tuple[tuple[str, int], ...] = ()) -> None:
        self.targets = targets

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        self.family, self.estimands = task.family.value, task.estimands

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step == 0:
            extra = f"EXTRA_TARGETS = {[list(t) for t in self.targets]!r}\n"
            return _call(0, "python", {"code": extra + ESCAPE_SCRIPT.read_text("utf-8")})
        findings = last_json_object(messages) or {"error": "the escape script printed nothing"}
        if step == 1:
            answer = contract_of(self.family).placeholder_answer(self.estimands)
            call = _call(1, "submit_answer", answer).tool_calls
            return AgentTurn(text="escape findings: " + json.dumps(findings), tool_calls=call)
        return AgentTurn(text="escape findings: " + json.dumps(findings))


class SimulatedPolicy(Policy):
    """Stands in for a model-bound agent at scale: each turn waits `turn_s` (the
    model's latency) and answers in text; the last turn submits a fixed answer. It
    never runs a command, so it measures the runner, not the sandbox."""

    def __init__(self, turn_s: float, turns: int) -> None:
        self.name = f"simulated:{turn_s:g}:{turns}"
        self.turn_s, self.turns = turn_s, turns
        self.family = "ate"
        self.estimands: tuple[str, ...] = ("ate",)

    def begin(self, task: TaskWire, tools: list[dict[str, Any]]) -> None:
        self.family, self.estimands = task.family.value, task.estimands

    def next_turn(self, messages: list[dict[str, Any]], deadline_s: float) -> AgentTurn:
        step = sum(1 for m in messages if m.get("role") == "assistant")
        time.sleep(max(0.0, min(self.turn_s, deadline_s)))
        if step + 1 < self.turns:
            return AgentTurn(text=f"thinking ({step + 1} of {self.turns})")
        answer = contract_of(self.family).placeholder_answer(self.estimands)
        return _call(step, "submit_answer", answer)
