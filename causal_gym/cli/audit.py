"""`causal-gym audit`: run the audit suite of a split's families on fresh tasks under
several keys (`--families eval-v1`, the default: the seed suite; eval-v2: the
estimand suite; eval-expert-v1: the expert suite; causal_gym/audit/suite.py), write
its report and plots, and exit 1 if a check fails."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from causal_gym.cli.common import KeyFileOption, app, fail, load_key, write_atomically
from causal_gym.task_id import NAMESPACES, SPLITS

if TYPE_CHECKING:
    from rich.console import Console

    from causal_gym.audit.suite import AuditRun, AuditSuite
    from causal_gym.audit.tables import Table
    from causal_gym.rng_keys.keys import DerivationKey


def _check_options(namespace: str, families: str, keys: int, per_family: int, out: Path) -> None:
    if families not in SPLITS:
        fail(f"unknown --families {families!r}: accepted are {', '.join(SPLITS)}")
    if namespace not in NAMESPACES:
        fail(f"unknown namespace {namespace!r}: accepted namespaces are {', '.join(NAMESPACES)}")
    if out.suffix != ".json":
        fail(f"--out must name a .json file, got {out}")
    if namespace not in ("train", families):
        hint = f": use --families {namespace}" if namespace in SPLITS else ""
        fail(f"--families {families} audits train or {families} tasks, not {namespace}{hint}")
    from causal_gym.audit.suite import suite_for_split

    if suite_for_split(families).past_manifest:
        return  # any key, past the manifest: the tier is drawn, not read from the split
    if namespace != "train" and keys > 1:
        fail(f"--namespace {namespace} is a frozen split under one key: use --keys 1")
    from causal_gym.contracts.families import split_counts

    smallest = min(split_counts(namespace).values()) if namespace != "train" else per_family
    if per_family > smallest:
        fail(f"{namespace} has {smallest} tasks in its smallest family: lower --per-family")


def _run(
    console: Console,
    suite: AuditSuite,
    chosen: list[tuple[str, DerivationKey]],
    per_family: int,
    namespace: str,
    workers: int,
) -> AuditRun:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from causal_gym.audit.runner import run_audit

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        total = per_family * len(suite.families) * len(chosen)
        job = progress.add_task(f"{suite.name} audit", total=total)
        return run_audit(
            suite,
            chosen,
            per_family,
            namespace,
            workers=workers,
            tick=lambda what: progress.update(job, advance=1, description=what),
        )


def _rich(title: str, drawn: Table) -> Any:
    from rich.table import Table as RichTable

    shown = RichTable(title=title)
    for name, align in zip(drawn.header, drawn.align, strict=True):
        shown.add_column(name, justify="right" if align == "r" else "left")
    for row in drawn.rows:
        shown.add_row(*row)
    return shown


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
    namespace: Annotated[
        str,
        typer.Option(
            "--namespace",
            help="train or the frozen split of --families; the expert and real audits' "
            "train tasks are their tier's.",
        ),
    ] = "train",
    families: Annotated[
        str,
        typer.Option(
            "--families",
            help="The frozen split whose families (and suite) to audit: eval-v1, eval-v2, "
            "eval-expert-v1 (the expert tier), eval-v3 (the designs), eval-real-v1 (the "
            "real tier).",
        ),
    ] = "eval-v1",
    key_file: KeyFileOption = None,
) -> None:
    """Score honest answers, hack probes (and, for eval-v1's families, a third-party
    AIPW analyst) on fresh tasks under several keys; exit 1 if a check fails."""
    _check_options(namespace, families, keys, per_family, out)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # workers share the cores; before numpy loads
    from rich.console import Console

    from causal_gym.rng_keys.keys import DerivationKey

    configured = load_key(key_file)
    chosen: list[tuple[str, DerivationKey]] = [
        ("default" if configured.is_default else "configured", configured)
    ]
    chosen += [
        (f"random-{i}", DerivationKey(secrets.token_bytes(32), "audit")) for i in range(1, keys)
    ]
    console = Console(stderr=True)
    from causal_gym.audit.suite import suite_for_split

    suite = suite_for_split(families)
    run = _run(console, suite, chosen, per_family, namespace, workers)
    report = suite.summarize(run)
    write_atomically(out, (report.model_dump_json(indent=2) + "\n").encode())
    plots = suite.plots(report, list(run.rows), out)
    name, first = next(iter(suite.tables.items()))
    keys_shown = ", ".join(k.label for k in report.keys)
    title = f"{suite.name} audit ({namespace}, {per_family} per family, keys {keys_shown}): {name}"
    console.print(_rich(title, first(report)))
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
