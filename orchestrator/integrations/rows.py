"""Placeholder dataset rows for trainers that read their prompts from a parquet file
(verl, SkyRL). A row is a slot, not a task: the adapter fills in a fresh task each
time the trainer hands it a row, so an epoch of `rows` rows is `rows` new tasks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.errors import IntegrationError


def placeholder_parquet(
    path: str | Path, rows: int, what: str, columns: Callable[[int], dict[str, Any]]
) -> Path:
    """Write `rows` rows: `data_source`, a one-message `prompt`, and `columns(i)`."""
    import pandas as pd

    if rows < 1:
        raise IntegrationError(f"a dataset of placeholder rows has rows >= 1, not {rows}")
    prompt = [{"role": "user", "content": f"a causal-gym task ({what} fills it in)"}]
    frame = pd.DataFrame(
        [{"data_source": "causal_gym", "prompt": prompt, **columns(i)} for i in range(rows)]
    )
    target = Path(path)
    frame.to_parquet(target)
    return target
