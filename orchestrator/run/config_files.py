"""Config files and what is wrong with them, in one line.

Every config the runner reads (a run config, a baselines config) goes through
`read_toml` and `one_line`: a file that cannot be read, is not UTF-8 or is not TOML,
an unknown key (named, with the keys accepted at that place), and a value of the wrong
type (named, with the type expected) each become one ConfigError line before any work.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from orchestrator.errors import ConfigError


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file's table, or a one-line ConfigError naming `what` it was."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what} {path} is not UTF-8 text (byte {exc.start}): a config is a TOML file"
        ) from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} {path} is not valid TOML: {exc}") from exc


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model whose fields are accepted at `loc` (the parent of the offending key)."""
    for part in loc:
        field = model.model_fields.get(str(part)) if isinstance(part, str) else None
        if field is None:
            if isinstance(part, int):  # an item of a list or tuple of models
                continue
            return None
        inner = _model_in(field.annotation)
        if inner is None:
            return None
        model = inner
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def one_line(exc: ValidationError, where: str, model: type[BaseModel]) -> str:
    """Every problem pydantic found, on one line: `where: field: what is wrong`."""
    problems: list[str] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        name = ".".join(str(p) for p in loc) or "config"
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            accepted = sorted(parent.model_fields) if parent is not None else []
            message = "unknown key" + (f" (accepted: {', '.join(accepted)})" if accepted else "")
        elif "type" in err["type"] or err["type"].endswith("_parsing"):
            message = f"{message}, got {type(err['input']).__name__} {_shown(err['input'])}"
        problem = f"{name}: {message}"
        if problem not in problems:
            problems.append(problem)
    return f"{where}: " + "; ".join(problems)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
