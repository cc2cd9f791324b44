"""`causal-gym export harbor`: a frozen public split as Harbor task folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from causal_gym.cli.common import app, emit, fail, load_key

export_app = typer.Typer(
    no_args_is_help=True, help="Write frozen public splits in other harnesses' formats."
)
app.add_typer(export_app, name="export")


@export_app.command("harbor")
def harbor(
    split: Annotated[str, typer.Option("--split", help="A frozen public split (eval-v1, ...).")],
    out: Annotated[Path, typer.Option("--out", help="A new folder for the tasks.")],
    families: Annotated[
        str | None, typer.Option("--families", help="Comma-separated families (default: all).")
    ] = None,
    per_family: Annotated[
        int | None, typer.Option("--per-family", help="The first N tasks of each family.")
    ] = None,
    base_image: Annotated[
        str,
        typer.Option("--base-image", help="The Dockerfiles' base (pin it: NAME@sha256:DIGEST)."),
    ] = "python:3.11-slim",
) -> None:
    """One Harbor task folder per task of SPLIT and a dataset.toml pinning their
    digests (docs: Protocols). Public key only: a secret key is refused."""
    from causal_gym.errors import CausalGymError
    from causal_gym.harbor.export import export_split
    from causal_gym.namespaces import SPLITS
    from causal_gym.task_id import FAMILIES

    if split not in SPLITS:
        fail(f"--split {split!r} is not a frozen split (accepted: {', '.join(SPLITS)})")
    chosen = None
    if families is not None:
        chosen = [f.strip() for f in families.split(",") if f.strip()]
        unknown = [f for f in chosen if f not in FAMILIES]
        if unknown or not chosen:
            fail(f"--families {families!r}: accepted families are {', '.join(FAMILIES)}")
    if per_family is not None and per_family < 1:
        fail(f"--per-family {per_family}: give a whole number of at least 1")
    if not base_image.strip() or any(c.isspace() for c in base_image):
        fail(f"--base-image {base_image!r}: give one image reference, e.g. NAME@sha256:DIGEST")
    key = load_key(None)

    def progress(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            typer.echo(f"export harbor: {done}/{total} tasks", err=True)

    try:
        summary = export_split(split, out, key, chosen, per_family, progress, base_image)
    except CausalGymError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {out}: {exc}", code=1)
    emit({"split": summary.split, "out": str(summary.out), "tasks": len(summary.tasks)})
