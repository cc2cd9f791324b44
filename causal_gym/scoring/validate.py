"""Turn raw submission text into a typed submission, or into a list of every problem.

Invalid input is never scored. The errors are meant to be read by an agent (they are
what submit_answer answers with), so each names the field and what is accepted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeGuard

from pydantic import ValidationError

from causal_gym.scoring.schemas import SUBMISSION_MODELS, AteSubmission
from causal_gym.task_id import Family


@dataclass(frozen=True)
class Accepted:
    """A submission that may be scored."""

    submission: AteSubmission
    ok: ClassVar[Literal[True]] = True
    errors: ClassVar[tuple[str, ...]] = ()


@dataclass(frozen=True)
class Rejected:
    """Every problem found; a rejected submission is never scored."""

    errors: tuple[str, ...]
    ok: ClassVar[Literal[False]] = False
    submission: ClassVar[None] = None


#: `isinstance(result, Accepted)` narrows to the typed submission.
Validation = Accepted | Rejected


def _pydantic_errors(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "submission"
        message = err["msg"].removeprefix("Value error, ")
        out.append(f"{where}: {message}")
    return out


def bounds_error(lower: float, upper: float) -> str:
    return f"ci_lower ({float(lower)!r}) must be <= ci_upper ({float(upper)!r})"


def _finite_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _cross_field_errors(raw: dict[str, Any], columns: Sequence[str] | None) -> list[str]:
    """Checks pydantic skips once a field fails; run always so every problem is listed."""
    errors = []
    lower, upper = raw.get("ci_lower"), raw.get("ci_upper")
    if _finite_number(lower) and _finite_number(upper) and lower > upper:
        errors.append(f"submission: {bounds_error(lower, upper)}")
    names = raw.get("adjustment_set")
    if columns is not None and isinstance(names, list):
        known = set(columns)
        unknown = sorted({n for n in names if isinstance(n, str) and n not in known})
        if unknown:
            listed = ", ".join(repr(n) for n in unknown)
            errors.append(f"adjustment_set: unknown columns {listed} (use names from data.csv)")
    return errors


def validate_submission(
    family: Family, raw: str | bytes | dict[str, Any], columns: Sequence[str] | None = None
) -> Validation:
    """Validate a submission for `family`; `columns` (public column names) enables the
    unknown-column check for adjustment sets."""
    model = SUBMISSION_MODELS[family]
    if isinstance(raw, str | bytes):
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return Rejected((f"submission is not valid JSON: {exc}",))
    else:
        data = raw
    if not isinstance(data, dict):
        fields = ", ".join(model.model_fields)
        return Rejected((f"submission must be a JSON object with fields {fields}",))

    errors: list[str] = []
    submission = None
    try:
        submission = model.model_validate(data)
    except ValidationError as exc:
        errors += _pydantic_errors(exc)
    errors += [e for e in _cross_field_errors(data, columns) if e not in errors]
    if errors or submission is None:
        return Rejected(tuple(errors))
    return Accepted(submission)
