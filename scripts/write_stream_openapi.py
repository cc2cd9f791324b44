"""Write the stream API's OpenAPI document to docs/stream-openapi-v1.json.

    .venv/bin/python scripts/write_stream_openapi.py

Run it after a deliberate change to the API (and bump API_VERSION in
orchestrator/stream/types.py when the change is not backward compatible);
tests/test_stream.py holds the served schema to the committed one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.stream.app import openapi_schema  # noqa: E402

if __name__ == "__main__":
    target = REPO / "docs" / "stream-openapi-v1.json"
    target.write_text(json.dumps(openapi_schema(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {target}")
