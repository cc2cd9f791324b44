"""Scoring commands: score one submission, run the anti-hack audit."""

from __future__ import annotations

import os
import secrets
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

    keys = ", ".join(k.label for k in report.keys)
    table = Table(title=f"audit ({report.namespace}, {report.per_family} per family, keys {keys})")
    for col in ("group", "n", "honest reward", "coverage", "AIPW reward", "AIPW coverage"):
        table.add_column(col, justify="right")
    for group, honest in report.honest.items():
        third = report.third_party.get(group)
        table.add_row(
            group,
            str(honest.n),
            f"{honest.mean_reward:.4f}",
            f"{honest.coverage:.4f}",
            f"{third.reward.mean:.4f}" if third else "",
            f"{third.coverage:.4f}" if third else "",
        )
    return table


@app.command()
def audit(
    per_family: Annotated[
        int, typer.Option("--per-family", min=20, help="Tasks per family and key (>= 20).")
    ] = 400,
    keys: Annotated[
        int,
        typer.Option(
            "--keys", min=1, max=9, help="The configured key plus this many minus one random ones."
        ),
    ] = 3,
    workers: Annotated[
        int, typer.Option("--workers", min=1, max=64, help="Worker processes.")
    ] = max(1, os.cpu_count() or 1),
    out: Annotated[
        Path, typer.Option("--out", help="Report JSON path (PNGs go beside it).")
    ] = Path("audit_report.json"),
    namespace: Annotated[str, typer.Option("--namespace", help="train or eval-v1.")] = "train",
    key_file: KeyFileOption = None,
) -> None:
    """Score honest answers, hack probes and a third-party AIPW analyst on fresh tasks
    under several keys; exit 1 if a check fails."""
    if namespace not in NAMESPACES:
        fail(f"unknown namespace {namespace!r}: accepted namespaces are {', '.join(NAMESPACES)}")
    if out.suffix != ".json":
        fail(f"--out must name a .json file, got {out}")
    if namespace == "eval-v1" and keys > 1:
        fail("--namespace eval-v1 is a frozen split under one key: use --keys 1")
    from causal_gym.splits.manifest import EVAL_V1_COUNTS

    if namespace == "eval-v1" and per_family > min(EVAL_V1_COUNTS.values()):
        fail(
            f"eval-v1 has {min(EVAL_V1_COUNTS.values())} tasks in its smallest family: "
            "--per-family must not exceed that"
        )
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # workers share the cores; before numpy loads
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from causal_gym.audit.runner import run_audit
    from causal_gym.audit.summary import summarize
    from causal_gym.rng_keys.keys import DerivationKey

    configured = load_key(key_file)
    chosen: list[tuple[str, DerivationKey]] = [
        ("default" if configured.is_default else "configured", configured)
    ]
    chosen += [
        (f"random-{i}", DerivationKey(secrets.token_bytes(32), "audit")) for i in range(1, keys)
    ]
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        job = progress.add_task("auditing", total=per_family * len(FAMILIES) * len(chosen))
        rows, failed = run_audit(
            chosen,
            per_family,
            namespace,
            workers=workers,
            tick=lambda what: progress.update(job, advance=1, description=what),
        )
    fingerprints = {label: key.fingerprint for label, key in chosen}
    report = summarize(rows, failed, fingerprints, namespace, per_family)
    write_atomically(out, (report.model_dump_json(indent=2) + "\n").encode())
    from causal_gym.audit.plots import write_plots  # matplotlib only when plotting

    plots = write_plots(report, rows, out)
    console.print(summary_table(report))
    for check in report.checks:
        mark = "[green]pass[/green]" if check.passed else "[red]FAIL[/red]"
        console.print(
            f"{mark} {check.name}: {check.detail} "
            f"[dim]({check.test}; false alarm {check.false_alarm:.1e})[/dim]",
            soft_wrap=True,  # one line per check, whatever the terminal width
        )
    console.print(
        f"{len(report.checks)} checks at per-check level {report.per_check_alpha:.1e}; "
        f"chance that a correct system fails any: {report.total_false_alarm:.2%}"
    )
    console.print(f"wrote {out} and {', '.join(p.name for p in plots)}")
    if not report.passed:
        raise typer.Exit(1)
