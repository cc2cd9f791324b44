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

from pydantic import BaseModel, ValidationError

from causal_gym.contracts.families import contract_of
from causal_gym.task_id import Family


@dataclass(frozen=True)
class Accepted:
    """A submission that may be scored."""

    submission: BaseModel
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

#: Bounds that keep validation linear and small: a real submission is three numbers,
#: maybe a probability and a few dozen column names.
MAX_SUBMISSION_BYTES = 64 * 1024
MAX_ITEMS = 2_000
MAX_STRING = 1_000
MAX_LISTED = 20


def _pydantic_errors(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "submission"
        message = err["msg"].removeprefix("Value error, ")
        out.append(f"{where}: {message}")
    return out


def bounds_error(lower: float, upper: float) -> str:
    """The message an agent is shown for an interval whose lower end is above its upper end."""
    return f"ci_lower ({float(lower)!r}) must be <= ci_upper ({float(upper)!r})"


def _finite_number(value: object) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _listed(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
    return shown + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")


def _effect_key_errors(raw: dict[str, Any], estimands: Sequence[str] | None) -> list[str]:
    """cate: `effects` must be keyed by exactly the task's modifier levels."""
    effects = raw.get("effects")
    if estimands is None or not isinstance(effects, dict):
        return []
    errors = []
    unknown = sorted(k for k in effects if k not in set(estimands))
    missing = [name for name in estimands if name not in effects]
    if unknown:
        accepted = _listed(list(estimands))
        errors.append(f"effects: unknown levels {_listed(unknown)} (the levels are {accepted})")
    if missing:
        errors.append(f"effects: missing levels {_listed(missing)}")
    return errors


def _named_estimand_errors(
    raw: dict[str, Any], estimands: Sequence[str] | None, known: Sequence[str]
) -> list[str]:
    """A design task names one estimand: an answer for another of the family's is
    refused (a LATE where the task asks for the ATE), never scored against a truth it
    did not estimate. A name the family does not know is pydantic's error."""
    named = raw.get("estimand")
    if not estimands or not isinstance(named, str) or named not in known:
        return []
    if named in estimands:
        return []
    asked = ", ".join(repr(name) for name in estimands)
    return [f"estimand: this task asks for {asked} (README.md's Design section), not {named!r}"]


def _cross_field_errors(
    raw: dict[str, Any],
    columns: Sequence[str] | None,
    estimands: Sequence[str] | None,
    per_level: bool,
) -> list[str]:
    """Checks pydantic skips once a field fails; run always so every problem is listed."""
    errors = _effect_key_errors(raw, estimands) if per_level else []
    lower, upper = raw.get("ci_lower"), raw.get("ci_upper")
    if _finite_number(lower) and _finite_number(upper) and lower > upper:
        errors.append(f"submission: {bounds_error(lower, upper)}")
    names = raw.get("adjustment_set")
    if columns is not None and isinstance(names, list):
        known = set(columns)
        unknown = sorted({n for n in names if isinstance(n, str) and n not in known})
        if unknown:
            errors.append(
                f"adjustment_set: unknown columns {_listed(unknown)} (use names from data.csv)"
            )
    return errors


def _too_large(value: object, budget: int = MAX_ITEMS) -> bool:
    """Whether a parsed value holds more than `budget` items in all (iterative, so it
    costs at most `budget` steps however large or deep the value is)."""
    stack = [value]
    while stack:
        budget -= 1
        if budget < 0:
            return True
        item = stack.pop()
        if isinstance(item, dict | list):
            budget -= len(item)  # the keys of a dict count too
            if budget < 0:
                return True
            stack.extend(item.values() if isinstance(item, dict) else item)
        elif isinstance(item, str) and len(item) > MAX_STRING:
            return True
    return False


def _parse(raw: str | bytes) -> object | Rejected:
    size = len(raw)
    if size > MAX_SUBMISSION_BYTES:
        return Rejected(
            (f"submission is {size} bytes long; at most {MAX_SUBMISSION_BYTES} are accepted",)
        )
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return Rejected((f"submission is not valid JSON: {exc}",))
    except RecursionError:
        return Rejected(("submission is not valid JSON: it is nested too deeply",))
    except ValueError as exc:  # an integer with thousands of digits
        return Rejected((f"submission is not valid JSON: {str(exc).split(';')[0]}",))


def validate_submission(
    family: Family,
    raw: str | bytes | dict[str, Any],
    columns: Sequence[str] | None = None,
    estimands: Sequence[str] | None = None,
) -> Validation:
    """Validate a submission for `family`; `columns` (public column names) enables the
    unknown-column check for adjustment sets, `estimands` (the task's names) the level
    check for cate. Cost is linear in the input and bounded:
    text over MAX_SUBMISSION_BYTES and objects over MAX_ITEMS items are refused unread."""
    model = contract_of(family).submission_model
    data = _parse(raw) if isinstance(raw, str | bytes) else raw
    if isinstance(data, Rejected):
        return data
    if not isinstance(data, dict):
        fields = ", ".join(model.model_fields)
        return Rejected((f"submission must be a JSON object with fields {fields}",))
    if _too_large(data):
        return Rejected(
            (
                f"submission holds more than {MAX_ITEMS} values (or a string over "
                f"{MAX_STRING} characters); a submission is a few numbers and column names",
            )
        )

    errors: list[str] = []
    submission = None
    try:
        submission = model.model_validate(data)
    except ValidationError as exc:
        errors += _pydantic_errors(exc)
    contract = contract_of(family)
    errors += [
        e
        for e in _cross_field_errors(data, columns, estimands, contract.per_level_estimands)
        if e not in errors
    ]
    if contract.task_named_estimand:
        errors += _named_estimand_errors(data, estimands, contract.estimands)
    if errors or submission is None:
        # agent text echoed in an error (a lone surrogate, say) must not break a log line
        return Rejected(tuple(e.encode("utf-8", "backslashreplace").decode() for e in errors))
    return Accepted(submission)
