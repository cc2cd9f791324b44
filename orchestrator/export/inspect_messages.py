"""A stored transcript (OpenAI chat messages, as the episode loop kept them) as
inspect_ai ChatMessages, and the submission it ended with.

The messages came from an agent and a sandbox: nothing about them is trusted. A role
outside the four is kept as a user message that says what it was; content that is not
a string is shown as its JSON; tool-call arguments that are not a JSON object become a
call with a parse error (as inspect_ai records a model's malformed call).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from orchestrator.agents.tools import SUBMISSION_ACCEPTED

SUBMIT_TOOL = "submit_answer"
Scrub = Callable[[str | None], str | None]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def _tool_calls(raw: Any, scrub: Scrub) -> list[Any]:
    from inspect_ai.tool import ToolCall

    calls = []
    for i, item in enumerate(raw if isinstance(raw, list) else []):
        item = item if isinstance(item, dict) else {}
        function = item.get("function")
        function = function if isinstance(function, dict) else {}
        name = _text(function.get("name")) or "unknown"
        text = scrub(_text(function.get("arguments"))) or ""
        error = None
        try:
            arguments = json.loads(text) if text else {}
        except ValueError:
            arguments, error = {}, f"the arguments are not JSON: {text[:200]}"
        if not isinstance(arguments, dict):
            arguments, error = {}, f"the arguments are not a JSON object: {text[:200]}"
        calls.append(
            ToolCall(
                id=_text(item.get("id")) or f"call_{i}",
                function=name,
                arguments=arguments,
                parse_error=error,
            )
        )
    return calls


def chat_messages(raw: list[dict[str, Any]], scrub: Scrub) -> list[Any]:
    """inspect_ai messages for a stored conversation, every text passed through
    `scrub` (a secret-key run's task ids out)."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )

    names: dict[str, str] = {}  # tool call id -> function name
    out: list[Any] = []
    for message in raw:
        role = message.get("role")
        content = scrub(_text(message.get("content"))) or ""
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = _tool_calls(message.get("tool_calls"), scrub)
            names.update({c.id: c.function for c in calls})
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            call_id = _text(message.get("tool_call_id"))
            out.append(
                ChatMessageTool(content=content, tool_call_id=call_id, function=names.get(call_id))
            )
        else:
            out.append(ChatMessageUser(content=f"[a message with role {_text(role)!r}] {content}"))
    return out


def submission_of(raw: list[dict[str, Any]]) -> tuple[str | None, list[str]]:
    """The accepted submit_answer call's arguments (compact JSON) and the replies of
    the rejected ones (the schema errors the agent was shown)."""
    calls: dict[str, str] = {}
    for message in raw:
        if message.get("role") != "assistant" or not isinstance(message.get("tool_calls"), list):
            continue
        for item in message["tool_calls"]:
            function = item.get("function") if isinstance(item, dict) else None
            if isinstance(function, dict) and function.get("name") == SUBMIT_TOOL:
                calls[_text(item.get("id"))] = _text(function.get("arguments"))
    answer, errors = None, []
    for message in raw:
        if message.get("role") != "tool" or _text(message.get("tool_call_id")) not in calls:
            continue
        reply = _text(message.get("content"))
        if reply.startswith(SUBMISSION_ACCEPTED):
            answer = calls[_text(message.get("tool_call_id"))]
        else:
            errors.append(reply)
    if answer is not None:
        with contextlib.suppress(ValueError):
            answer = json.dumps(json.loads(answer), separators=(",", ":"))
    return answer, errors
