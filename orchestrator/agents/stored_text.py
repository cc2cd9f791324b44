"""Bounds on the text an episode hands back to be stored.

An agent or a model server decides how long its messages are (a reply may run to the
16 MiB a user policy's pipe accepts, an exception message to 100,000 characters), and
every attempt's transcript travels to the head and into transcripts.jsonl. So what is
stored is capped: each string at MAX_STORED_CHARS, the cut marked with the full length,
and a transcript at MAX_TRANSCRIPT_MESSAGES messages. The episode loop itself keeps the
whole conversation (the policy sees what it wrote); only the stored copy is cut.
"""

from __future__ import annotations

from typing import Any

#: Longest string stored for one field of a message or record.
MAX_STORED_CHARS = 16 * 1024
#: Most messages a stored transcript keeps (a 1,000-turn episode has about 3,000).
MAX_TRANSCRIPT_MESSAGES = 4_000


def cap_text(text: str | None, limit: int = MAX_STORED_CHARS) -> str | None:
    """`text` cut to `limit` characters with a note of its full length."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" [... cut: {len(text)} chars in all]"


def cap_with_length(text: str | None) -> tuple[str | None, int | None]:
    """`cap_text`, and the full length when the text was cut (records keep it)."""
    if text is None or len(text) <= MAX_STORED_CHARS:
        return text, None
    return cap_text(text), len(text)


def _cap(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return cap_text(value)
    if depth > 6:  # messages are shallow; deeper structures are not stored
        return "[... nested too deep to store]"
    if isinstance(value, dict):
        return {str(k)[:200]: _cap(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_cap(v, depth + 1) for v in value[:MAX_TRANSCRIPT_MESSAGES]]
    return value


def cap_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of the conversation fit to store: strings capped, length bounded."""
    kept = messages[:MAX_TRANSCRIPT_MESSAGES]
    capped = [_cap(m) for m in kept]
    if len(messages) > len(kept):
        capped.append(
            {"role": "note", "content": f"[... {len(messages) - len(kept)} more messages cut]"}
        )
    return capped
