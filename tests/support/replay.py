"""A scripted model that replays the honest reference analysis as tool calls, for any
harness: one bash call that writes analyst.py and answer.py and runs them, then submit_answer with
what it printed. Used by benchmarks that drive vf-eval and causal-gym-run with the
same server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.openai_server import Reply, tool_outputs

KIT = Path(__file__).resolve().parents[2] / "causal_gym" / "reference"
RUN_ANALYST = (
    "".join(
        f"cat > {name} <<'CAUSAL_GYM_EOF'\n{(KIT / name).read_text()}\nCAUSAL_GYM_EOF\n"
        for name in ("analyst.py", "answer.py")
    )
    + "python3 answer.py ."
)


def _ours(messages: list[dict[str, Any]]) -> bool:
    """causal-gym-run's own loop (its system prompt) takes the answer's fields directly;
    verifiers' submit_answer takes them under `answer`."""
    return any(
        m.get("role") == "system" and "careful applied statistician" in str(m.get("content"))
        for m in messages
    )


def replay_reference(messages: list[dict[str, Any]]) -> Reply:
    outputs = tool_outputs(messages)
    if not outputs:
        return Reply(tool="bash", arguments={"command": RUN_ANALYST})
    for line in reversed(outputs[-1].splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            answer = json.loads(line)
            return Reply(
                tool="submit_answer", arguments=answer if _ours(messages) else {"answer": answer}
            )
    return Reply(text="the analysis printed no answer")
