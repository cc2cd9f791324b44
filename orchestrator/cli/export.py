"""`causal-gym-run export --format inspect RUN_DIR [--out FILE]`: a finished (or
interrupted) run folder as an inspect_ai log, for `inspect view`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.common import app, fail
from orchestrator.cli.run import require_inspect_or_fail, write_inspect_log

#: The formats `export` writes.
FORMATS = ("inspect",)


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (causal-gym-run --out).")],
    format: Annotated[str, typer.Option("--format", help="inspect (an inspect_ai .eval log).")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="The log file (.eval; default: inside RUN_DIR)."),
    ] = None,
) -> None:
    """Write a run's log in another tool's format: `inspect` writes one .eval file,
    every episode a sample (see `inspect view start --log-dir DIR`)."""
    if format not in FORMATS:
        fail(f"--format {format!r} is not one this command writes (accepted: {', '.join(FORMATS)})")
    if out is not None and out.suffix != ".eval":
        fail(f"--out {out}: an inspect log's name ends in .eval")
    if out is not None and not out.parent.is_dir():
        fail(f"--out {out}: its folder {out.parent} does not exist")
    if not (run_dir / "run.json").is_file():
        fail(f"{run_dir} is not a run folder (it has no run.json)")
    require_inspect_or_fail()
    for line in write_inspect_log(run_dir, out):
        typer.echo(line)
