"""Scoring commands: score one submission, run the anti-hack audit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from causal_gym.cli.common import (
    KeyFileOption,
    TaskIdArgument,
    app,
    build,
    emit,
    fail,
    load_key,
    write_atomically,
)
from causal_gym.task_id import FAMILIES, NAMESPACES

if TYPE_CHECKING:
    from rich.table import Table

    from causal_gym.audit.report import AuditReport

EXIT_INVALID_SUBMISSION = 1


@app.command()
def score(
    task_id: TaskIdArgument,
    submission: Annotated[Path, typer.Argument(help="JSON file with one submission.")],
    key_file: KeyFileOption = None,
) -> None:
    """Validate and score a submission; schema errors exit 1 and are never scored."""
    from causal_gym.scoring.reward import score_submission
    from causal_gym.scoring.validate import Accepted, validate_submission

    try:
        raw = submission.read_bytes()
    except OSError as exc:
        fail(f"cannot read submission {submission}: {exc.strerror or exc}")
    task = build(task_id, key_file)
    checked = validate_submission(task.public.family, raw, task.public.columns)
    if not isinstance(checked, Accepted):
        emit({"task_id": task.public.task_id, "valid": False, "errors": list(checked.errors)})
        for error in checked.errors:
            typer.echo(f"invalid submission: {error}", err=True)
        raise typer.Exit(EXIT_INVALID_SUBMISSION)
    record = score_submission(task.hidden, checked.submission)
    emit({"task_id": task.public.task_id, "valid": True, **record.as_dict()})


def summary_table(report: AuditReport) -> Table:
    from rich.table import Table

    table = Table(title=f"audit ({report.namespace}, {report.per_family} per family)")
    for col in ("family", "n", "honest reward", "coverage", "width sweep peak"):
        table.add_column(col, justify="right")
    for family, honest in report.honest.items():
        peak = report.width_sweep[family].argmax_level
        table.add_row(
            family,
            str(honest.n),
            f"{honest.mean_reward:.4f}",
            f"{honest.coverage:.4f}",
            f"{peak:.2f}",
        )
    return table


@app.command()
def audit(
    per_family: Annotated[int, typer.Option("--per-family", min=1, help="Tasks per family.")] = 300,
    out: Annotated[
        Path, typer.Option("--out", help="Report JSON path (PNGs go beside it).")
    ] = Path("audit_report.json"),
    namespace: Annotated[str, typer.Option("--namespace", help="train or eval-v1.")] = "train",
    key_file: KeyFileOption = None,
) -> None:
    """Score honest answers and hack probes on fresh tasks; exit 1 if a check fails."""
    if namespace not in NAMESPACES:
        fail(f"unknown namespace {namespace!r}: accepted namespaces are {', '.join(NAMESPACES)}")
    if out.suffix != ".json":
        fail(f"--out must name a .json file, got {out}")
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from causal_gym.audit.runner import run_audit

    key = load_key(key_file)
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        job = progress.add_task("auditing", total=per_family * len(FAMILIES))
        report, rows = run_audit(
            key,
            per_family,
            namespace,
            tick=lambda tid: progress.update(job, advance=1, description=tid),
        )
    write_atomically(out, (report.model_dump_json(indent=2) + "\n").encode())
    from causal_gym.audit.plots import write_plots  # matplotlib only when plotting

    plots = write_plots(report, rows, out)
    console.print(summary_table(report))
    for check in report.checks:
        mark = "[green]pass[/green]" if check.passed else "[red]FAIL[/red]"
        console.print(f"{mark} {check.name}: {check.detail}")
    console.print(f"wrote {out} and {', '.join(p.name for p in plots)}")
    if not report.passed:
        raise typer.Exit(1)
