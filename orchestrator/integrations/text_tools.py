"""Tool calls written as text, for trainers whose environments see the model's raw
completion (SkyRL's text-in, text-out envs), and the system prompt that tells a model
how to write them, listing the tools as JSON schemas.

The convention is Hermes/ChatML's, which SmolLM2, Qwen and most open chat templates use:

    <tool_call>
    {"name": "bash", "arguments": {"command": "head data.csv"}}
    </tool_call>
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from orchestrator.agents.episode import NUDGE, SYSTEM_PROMPT

OPEN, CLOSE = "<tool_call>", "</tool_call>"
#: Calls one completion may make; more are answered with an error, not run.
MAX_CALLS = 8


@dataclass(frozen=True)
class TextCall:
    """One <tool_call> block read from a completion: a name and JSON arguments to run,
    or the error the agent is shown instead."""

    name: str
    arguments: str  # JSON text, as the tools take it
    error: str | None = None  # why the call could not be read (then it is not run)


def parse_tool_calls(text: str) -> list[TextCall]:
    """Every <tool_call> block in a completion, in order; unreadable ones carry an
    error the agent is shown."""
    calls: list[TextCall] = []
    for block in _blocks(text):
        if len(calls) == MAX_CALLS:
            calls.append(TextCall("", "", f"error: at most {MAX_CALLS} tool calls a turn"))
            break
        try:
            value = json.loads(block)
        except json.JSONDecodeError as exc:
            calls.append(TextCall("", "", f"error: a tool call is not JSON ({exc.msg})"))
            continue
        name = value.get("name") if isinstance(value, dict) else None
        arguments = value.get("arguments", {}) if isinstance(value, dict) else None
        if not isinstance(name, str) or not isinstance(arguments, dict | str):
            calls.append(
                TextCall("", "", 'error: a tool call is {"name": ..., "arguments": {...}}')
            )
            continue
        text_arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append(TextCall(name, text_arguments))
    return calls


def _blocks(text: str) -> Iterator[str]:
    """The complete <tool_call> blocks, found with str.find: one pass over the text
    (a lazy regex rescans to the end after every unclosed opening, quadratic in a
    completion full of them)."""
    start = text.find(OPEN)
    while start >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            return
        yield text[start + len(OPEN) : end].strip()
        start = text.find(OPEN, end + len(CLOSE))


def system_prompt_with_tools(tools: list[dict[str, Any]], intro: str = SYSTEM_PROMPT) -> str:
    """A system prompt (the agents', or a rendering's own) plus how to call the tools
    in text. The example calls a tool the prompt offers: bash's example is a harmless
    look at the data; any other tool's shows only the syntax, since a concrete call
    (which columns, which estimator) would hint at a decision the model must make."""
    listed = "\n".join(json.dumps(t["function"]) for t in tools)
    names = [str(t["function"]["name"]) for t in tools]
    if "bash" in names or not names:
        example = '{"name": "bash", "arguments": {"command": "head -5 data.csv"}}'
    else:
        example = f'{{"name": "{names[0]}", "arguments": {{...}}}}'
    return (
        f"{intro}\n\nYou can call these tools:\n<tools>\n{listed}\n</tools>\n"
        "To call one, write a JSON object with its name and arguments inside "
        f"<tool_call></tool_call> tags, for example:\n<tool_call>\n{example}\n</tool_call>\n"
        "Each tool's output comes back inside <tool_response></tool_response> tags."
    )


def tool_response(content: str) -> str:
    """One tool's output as the model reads it back, in <tool_response> tags."""
    return f"<tool_response>\n{content}\n</tool_response>"


def observation(outputs: list[str]) -> str:
    """The user turn that answers a completion: its tools' outputs, or the agents'
    nudge when it called none."""
    return "\n".join(tool_response(o) for o in outputs) if outputs else NUDGE
