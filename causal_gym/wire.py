"""What crosses from the head to the workers: the public wire format of a task.

A worker (a sandbox actor, an agent, a trainer's rollout) needs the staged files, the
prompt, the answer schema and the family, and nothing else. It gets an opaque handle
instead of the task id: with a secret key the id is what the head re-derives the
truth from, so it stays on the head. This module imports pydantic and the task-id
enums only, never the generator, the SCM or the key code.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from causal_gym.contracts.families import contract_of
from causal_gym.task_id import Family

WIRE_VERSION = 1
#: An opaque handle: letters, digits, dashes and underscores, nothing that parses as
#: a task id (no colon).
HANDLE_PATTERN = r"^[A-Za-z0-9_-]{8,64}$"


class TaskWire(BaseModel):
    """A task as a worker sees it. Files travel as base64 in JSON."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, ser_json_bytes="base64", val_json_bytes="base64"
    )

    wire_version: Literal[1] = 1
    handle: str = Field(pattern=HANDLE_PATTERN)
    family: Family
    files: dict[str, bytes]
    prompt: str
    columns: tuple[str, ...]
    submission_schema: dict[str, Any]
    n_rows: int = Field(gt=0)
    #: What the submission answers: ("ate",), or cate's modifier levels.
    estimands: tuple[str, ...] = ("ate",)

    @model_validator(mode="after")
    def _exactly_the_staged_files(self) -> TaskWire:
        staged = contract_of(self.family).staged_files
        if sorted(self.files) != sorted(staged):
            raise ValueError(
                f"a {self.family.value} task stages exactly {staged}, got {sorted(self.files)}"
            )
        return self

    @property
    def readme(self) -> str:
        """The staged README.md as text: the task as the agent reads it."""
        return self.files["README.md"].decode("utf-8")

    def __repr__(self) -> str:  # the files are large; the handle says which task
        return (
            f"TaskWire(handle={self.handle!r}, family={self.family.value!r}, n_rows={self.n_rows})"
        )
