"""The three tools an agent gets, as OpenAI function specs, and how they execute.

bash and python run inside the sandbox; submit_answer never does: it is validated
on the host against the family's schema, and its parameters *are* that schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from causal_gym.scoring.schemas import submission_json_schema
from causal_gym.scoring.validate import Accepted, Validation, validate_submission
from causal_gym.task import PublicTask
from orchestrator.sandbox.base import ExecResult, Sandbox

TOOL_NAMES = ("bash", "python", "submit_answer")


def tool_specs(task: PublicTask) -> list[dict[str, Any]]:
    schema = submission_json_schema(task.family)
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
    if result.stdout:
        parts.append("stdout:\n" + clip(result.stdout))
    if result.stderr:
        parts.append("stderr:\n" + clip(result.stderr))
    if result.truncated:
        parts.append("[output was truncated by the sandbox]")
    return "\n".join(parts)


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
    argv: str | list[str] = value if name == "bash" else ["python", "-c", value]
    result = sandbox.exec(argv, timeout_s)
    return ToolOutcome(format_exec(result, limit), exec_result=result)


def run_submit(raw: str, task: PublicTask) -> ToolOutcome:
    checked = validate_submission(task.family, raw or "", task.columns)
    if isinstance(checked, Accepted):
        return ToolOutcome(
            "Submission accepted. It is final; the episode ends here.", validation=checked
        )
    listed = "\n".join(f"- {e}" for e in checked.errors)
    return ToolOutcome(
        f"Submission rejected, not scored ({len(checked.errors)} problem(s)):\n"
        f"{listed}\nFix them and call submit_answer again.",
        validation=checked,
    )
