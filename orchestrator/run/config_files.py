"""Config files and what is wrong with them, in one line.

Every config the runner reads (a run config, a baselines config, episode settings)
goes through `read_config_bytes` and then `read_toml` or `read_json`, and `one_line`:
a file that is not a regular file, is larger than MAX_CONFIG_BYTES, cannot be read, is
not UTF-8 or is not TOML (JSON), an unknown key (named, with the keys accepted at that
place), and a value of the wrong type (named, with the type expected) each become one
ConfigError line before any work. The size is checked on the open descriptor before a
byte is read, and at most one byte past the bound is ever read (`--config /dev/zero`
once grew the runner to 24 GB before the kernel's OOM killer ended it).
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from orchestrator.errors import ConfigError

#: Largest config file read (the shipped ones are a few KiB).
MAX_CONFIG_BYTES = 1 << 20


def read_config_bytes(path: Path, what: str) -> bytes:
    """A config file's bytes: a regular file of at most MAX_CONFIG_BYTES, or a one-line
    ConfigError (a FIFO, a device or a directory is refused without blocking on it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # a FIFO, a device, a directory: never read
        os.close(fd)
        raise ConfigError(f"{what} {path} is not a regular file: a config is a TOML file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{what} {path} is {info.st_size} bytes: a config is at most "
                f"{MAX_CONFIG_BYTES} bytes"
            )
        try:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_CONFIG_BYTES:  # it grew while we read it
        raise ConfigError(f"{what} {path} is over {MAX_CONFIG_BYTES} bytes")
    return raw


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON config's object, or a one-line ConfigError naming `what` it was."""
    raw = read_config_bytes(path, what)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{what} {path} is not valid JSON: {str(exc).splitlines()[0]}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{what} {path} is not a JSON object")
    return data


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file's table, or a one-line ConfigError naming `what` it was."""
    raw = read_config_bytes(path, what)
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
