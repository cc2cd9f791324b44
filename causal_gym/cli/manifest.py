"""Manifest commands: list the frozen split, verify the generator reproduces it."""

from __future__ import annotations

from typing import Annotated

import typer

from causal_gym.cli.common import app, fail, load_key
from causal_gym.errors import CausalGymError
from causal_gym.namespaces import SPLITS, Namespace

EVAL_V1 = Namespace.EVAL_V1.value

manifest_app = typer.Typer(
    help=f"The frozen splits ({', '.join(SPLITS)}): list and verify their manifests.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(manifest_app, name="manifest")
SplitOption = Annotated[str, typer.Option("--split", help="Frozen split name.")]


@manifest_app.command("list")
def list_ids(split: SplitOption = EVAL_V1) -> None:
    """Print the split's task ids, one per line."""
    from causal_gym.splits.manifest import check_split, load_manifest

    try:
        manifest = load_manifest(check_split(split))
    except CausalGymError as exc:
        fail(str(exc))
    for entry in manifest.tasks:
        typer.echo(entry.task_id)


@manifest_app.command("verify")
def verify(
    split: SplitOption = EVAL_V1,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Check N tasks spread over the split.")
    ] = None,
) -> None:
    """Regenerate tasks and compare tier, rows and hashes; exit 1 on any mismatch."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from causal_gym.splits.freeze import spread_sample, verify_entries
    from causal_gym.splits.manifest import check_split, load_manifest

    try:
        manifest = load_manifest(check_split(split))
    except CausalGymError as exc:
        fail(str(exc))
    entries = spread_sample(manifest.tasks, limit)
    key = load_key(None)
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console
    ) as progress:
        job = progress.add_task(f"verifying {split}", total=len(entries))
        try:
            mismatches = verify_entries(
                manifest,
                entries,
                key,
                tick=lambda tid: progress.update(job, advance=1, description=tid),
            )
        except CausalGymError as exc:
            fail(str(exc))
    for m in mismatches:
        typer.echo(f"MISMATCH {m.task_id} {m.field}: manifest {m.expected} != generated {m.actual}")
    typer.echo(
        f"{split}: verified {len(entries)} of {len(manifest.tasks)} tasks, "
        f"{len(mismatches)} mismatches"
    )
    if mismatches:
        raise typer.Exit(1)
