"""The JSON Schema of each family's submission model, as every README prints it and
the `submit_answer` tool declares it (each model is named by its family's contract)."""

from __future__ import annotations

import copy
import functools

from causal_gym.contracts.families import contract_of


def submission_json_schema(family: str) -> dict[str, object]:
    """JSON Schema of the family's submission, as printed in the README (a fresh copy:
    callers may edit it; building it costs about a millisecond, so it is built once)."""
    return copy.deepcopy(_schema(str(family)))


@functools.cache
def _schema(family: str) -> dict[str, object]:
    schema = contract_of(family).submission_model.model_json_schema()
    schema["title"] = f"{family} submission"
    return schema
