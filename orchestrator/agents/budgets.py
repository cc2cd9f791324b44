"""The episode's numeric budgets, in a module with no imports, so the CLIs can show
their defaults without loading pydantic (tests/test_imports.py holds them to it)."""

from __future__ import annotations

#: Most tokens one turn may report (a policy claiming more is misreporting).
MAX_TURN_TOKENS = 100_000_000
#: Most model retries one turn may report.
MAX_TURN_RETRIES = 1_000
#: Characters of one tool call's output the model sees by default, and the least a
#: config may set (an episode's, a run's, a trainer session's and the CLI's).
TOOL_OUTPUT_CHARS = 16_000
MIN_TOOL_OUTPUT_CHARS = 256
