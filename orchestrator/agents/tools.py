"""The three tools an agent gets, as OpenAI function specs, and how they execute.

bash and python run inside the sandbox; submit_answer never does: it is validated
on the host against the family's schema, and its parameters *are* that schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from causal_gym.scoring.validate import Accepted, Validation, validate_submission
from causal_gym.wire import TaskWire
from orchestrator.sandbox.base import ExecResult, Sandbox

TOOL_NAMES = ("bash", "python", "submit_answer")
#: A bash command or python code longer than this is refused as a tool error ...
MAX_ARGUMENT_BYTES = 512 * 1024
#: ... and one longer than this runs from a staged file instead of the command line.
INLINE_ARGUMENT_BYTES = 64 * 1024
STAGED_SCRIPT = {"bash": ".causal-gym-tool.sh", "python": ".causal-gym-tool.py"}


def tool_specs(task: TaskWire) -> list[dict[str, Any]]:
    schema = dict(task.submission_schema)
    schema.pop("title", None)
    return [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "description": "Run a shell command in /workspace (no network). Returns exit code, "
                "stdout and stderr (long output is truncated).",
                "parameters": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["command"],
                    "properties": {"command": {"type": "string"}},
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "python",
                "description": "Run Python 3.11 code in /workspace with numpy, pandas, scipy, "
                "statsmodels and scikit-learn. Print what you want to see.",
                "parameters": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["code"],
                    "properties": {"code": {"type": "string"}},
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "submit_answer",
                "description": "Submit the final answer (the JSON object described in README.md). "
                "Invalid submissions return the errors and cost a turn; the first "
                "valid submission is final and ends the episode.",
                "parameters": schema,
            },
        },
    ]


LIMIT_NOTES = {
    "memory": "the sandbox's memory total; a process was killed",
    "processes": "the sandbox's process limit; a fork was refused",
    "disk": "the sandbox's disk (workspace, /tmp and /dev/shm together) is full",
}


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    exec_result: ExecResult | None = None
    validation: Validation | None = None


def _arguments(raw: str) -> dict[str, Any] | str:
    """Parsed arguments, or the error text for malformed JSON."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return f"error: tool arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    return value if isinstance(value, dict) else "error: tool arguments must be a JSON object"


def format_exec(result: ExecResult, limit: int) -> str:
    def clip(text: str) -> str:
        return (
            text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} chars cut]"
        )

    status = (
        "timed out (killed at the deadline)"
        if result.timed_out
        else f"exit code {result.exit_code}"
    )
    parts = [status]
    for limit_name in result.limits_hit:
        parts.append(f"[sandbox limit reached: {LIMIT_NOTES.get(limit_name, limit_name)}]")
    if result.stdout:
        parts.append("stdout:\n" + clip(result.stdout))
    if result.stderr:
        parts.append("stderr:\n" + clip(result.stderr))
    if result.truncated:
        parts.append("[output was truncated by the sandbox]")
    return "\n".join(parts)


def _unrunnable(name: str, value: str) -> str | None:
    """Why no shell or interpreter could take `value` (as a tool error), or None."""
    if "\x00" in value:
        return f"error: the {name} argument contains a NUL byte, which no program can take"
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return f"error: the {name} argument is not valid UTF-8 (it holds a lone surrogate)"
    if size > MAX_ARGUMENT_BYTES:
        return (
            f"error: the {name} argument is {size} bytes; at most {MAX_ARGUMENT_BYTES} are "
            "accepted (write long code to a file in several calls)"
        )
    return None


def run_sandbox_tool(
    name: str, raw: str, sandbox: Sandbox, timeout_s: float, limit: int
) -> ToolOutcome:
    args = _arguments(raw)
    if isinstance(args, str):
        return ToolOutcome(args)
    field = "command" if name == "bash" else "code"
    value = args.get(field)
    if not isinstance(value, str) or set(args) != {field}:
        return ToolOutcome(f"error: {name} takes exactly one string argument '{field}'")
    problem = _unrunnable(name, value)
    if problem:
        return ToolOutcome(problem)
    argv: str | list[str]
    if len(value) > INLINE_ARGUMENT_BYTES:
        # One argv string may not exceed 128 KiB (MAX_ARG_STRLEN): long code is staged as
        # a file in the workspace and run from there.
        script = STAGED_SCRIPT[name]
        sandbox.write_file(script, value.encode("utf-8"))
        argv = ["sh", script] if name == "bash" else ["python", script]
    else:
        argv = value if name == "bash" else ["python", "-c", value]
    result = sandbox.exec(argv, timeout_s)
    return ToolOutcome(format_exec(result, limit), exec_result=result)


#: The reply to a valid submission (exports tell an accepted call by it).
SUBMISSION_ACCEPTED = "Submission accepted. It is final; the episode ends here."


def run_submit(raw: str, task: TaskWire) -> ToolOutcome:
    checked = validate_submission(task.family, raw or "", task.columns, task.estimands)
    if isinstance(checked, Accepted):
        return ToolOutcome(SUBMISSION_ACCEPTED, validation=checked)
    listed = "\n".join(f"- {e}" for e in checked.errors)
    return ToolOutcome(
        f"Submission rejected, not scored ({len(checked.errors)} problem(s)):\n"
        f"{listed}\nFix them and call submit_answer again.",
        validation=checked,
    )
