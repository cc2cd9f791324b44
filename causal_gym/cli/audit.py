"""`causal-gym audit`: score honest answers and hack probes on fresh tasks under
several keys, for the seed's families (`--families eval-v1`, the default) or the
multi-estimand ones (`--families eval-v2`); exit 1 if a check fails."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from causal_gym.cli.common import KeyFileOption, app, fail, load_key, write_atomically
from causal_gym.task_id import NAMESPACES, SPLITS

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from causal_gym.audit.estimand_report import EstimandAuditReport
    from causal_gym.audit.expert_report import ExpertAuditReport
    from causal_gym.audit.report import AuditReport
    from causal_gym.rng_keys.keys import DerivationKey

#: `--families` names a frozen split: the audit covers the families it holds (each
#: family declares its splits: families/registry.py).
FAMILY_GROUPS = SPLITS
#: The expert audit draws, under each key, the first expert train tasks of each family
#: (the tier as streams serve it, at the newest generator version), or with
#: `--namespace eval-expert-v1` tasks the way that frozen split is drawn (every task
#: expert, at its planned size, generator version 2).
EXPERT = "eval-expert-v1"


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


def estimand_table(report: EstimandAuditReport) -> Table:
    from rich.table import Table

    keys = ", ".join(k.label for k in report.keys)
    table = Table(title=f"audit ({report.namespace}, {report.per_family} per family, keys {keys})")
    for col in ("family", "n", "honest reward", "coverage per estimand", "Brier skill"):
        table.add_column(col, justify="right")
    for family, s in report.families.items():
        coverage = ", ".join(f"{name} {c.coverage:.3f}" for name, c in s.coverage.items())
        skill = "" if s.mean_brier_skill is None else f"{s.mean_brier_skill:.4f}"
        table.add_row(family, str(s.n), f"{s.mean_reward:.4f}", coverage, skill)
    return table


def expert_table(report: ExpertAuditReport) -> Table:
    from rich.table import Table

    keys = ", ".join(k.label for k in report.keys)
    table = Table(title=f"expert audit ({report.per_family} per family, keys {keys})")
    for col in ("family", "n", "honest reward", "coverage", "width / r", "OLS coverage"):
        table.add_column(col, justify="right")
    for family, s in report.families.items():
        table.add_row(
            family,
            str(s.n),
            f"{s.mean_reward:.4f}",
            f"{s.coverage:.3f}",
            f"{s.mean_width_ratio:.3f}",
            f"{s.linear_coverage:.3f}",
        )
    return table


def _check_options(namespace: str, families: str, keys: int, per_family: int, out: Path) -> None:
    if families not in FAMILY_GROUPS:
        fail(f"unknown --families {families!r}: accepted are {', '.join(FAMILY_GROUPS)}")
    if namespace not in NAMESPACES:
        fail(f"unknown namespace {namespace!r}: accepted namespaces are {', '.join(NAMESPACES)}")
    if families == EXPERT:
        if namespace not in ("train", EXPERT):
            fail(f"--families {EXPERT} audits train or {EXPERT} tasks, not {namespace}")
        if out.suffix != ".json":
            fail(f"--out must name a .json file, got {out}")
        return
    if namespace != "train" and namespace != families:
        fail(f"--namespace {namespace} holds the {namespace} families: use --families {namespace}")
    if out.suffix != ".json":
        fail(f"--out must name a .json file, got {out}")
    if namespace != "train" and keys > 1:
        fail(f"--namespace {namespace} is a frozen split under one key: use --keys 1")
    from causal_gym.splits.manifest import split_counts

    if namespace != "train" and per_family > min(split_counts(namespace).values()):
        smallest = min(split_counts(namespace).values())
        fail(f"{namespace} has {smallest} tasks in its smallest family: lower --per-family")


def _run(
    console: Console,
    chosen: list[tuple[str, DerivationKey]],
    per_family: int,
    namespace: str,
    workers: int,
    families: tuple[str, ...],
    audit: Callable[..., Any],
    expert_tier: bool = False,
) -> tuple[list[Any], dict[str, list[str]]]:
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
        job = progress.add_task("auditing", total=per_family * len(families) * len(chosen))
        return run_audit(
            chosen,
            per_family,
            namespace,
            workers=workers,
            tick=lambda what: progress.update(job, advance=1, description=what),
            families=families,
            audit=audit,
            expert_tier=expert_tier,
        )


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
            help="train, eval-v1, eval-v2 or (the expert audit) eval-expert-v1; the expert "
            "audit's train tasks are the expert tier's.",
        ),
    ] = "train",
    families: Annotated[
        str,
        typer.Option(
            "--families",
            help="eval-v1: ate, adjustment, null_detect; eval-v2: cate, mediation, "
            "obs_vs_rct; eval-expert-v1: the expert tier of ate, adjustment, null_detect.",
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
    fingerprints = {label: key.fingerprint for label, key in chosen}
    from causal_gym.families.registry import split_families

    group = split_families(families)
    report: AuditReport | EstimandAuditReport | ExpertAuditReport
    if families == EXPERT:
        from causal_gym.audit.expert_audit import audit_expert_task
        from causal_gym.audit.expert_report import summarize_expert

        train = namespace == "train"
        rows, failed = _run(
            console, chosen, per_family, namespace, workers, group, audit_expert_task, train
        )
        report = summarize_expert(rows, failed, fingerprints, namespace, per_family, group)
        table = expert_table(report)
    elif families == "eval-v1":
        from causal_gym.audit.runner import audit_task
        from causal_gym.audit.summary import summarize

        rows, failed = _run(console, chosen, per_family, namespace, workers, group, audit_task)
        report = summarize(rows, failed, fingerprints, namespace, per_family)
        table = summary_table(report)
    else:
        from causal_gym.audit.estimand_audit import audit_estimand_task
        from causal_gym.audit.estimand_report import summarize_estimands

        rows, failed = _run(
            console, chosen, per_family, namespace, workers, group, audit_estimand_task
        )
        report = summarize_estimands(rows, failed, fingerprints, namespace, per_family, group)
        table = estimand_table(report)
    write_atomically(out, (report.model_dump_json(indent=2) + "\n").encode())
    plots = _plots(report, rows, out)
    console.print(table)
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


def _plots(
    report: AuditReport | EstimandAuditReport | ExpertAuditReport, rows: list[Any], out: Path
) -> list[Path]:
    """matplotlib only when plotting."""
    from causal_gym.audit.estimand_report import EstimandAuditReport
    from causal_gym.audit.expert_report import ExpertAuditReport

    if isinstance(report, ExpertAuditReport):
        from causal_gym.audit.expert_plots import write_expert_plots

        return write_expert_plots(report, rows, out)

    if isinstance(report, EstimandAuditReport):
        from causal_gym.audit.estimand_plots import write_estimand_plots

        return write_estimand_plots(report, rows, out)
    from causal_gym.audit.plots import write_plots

    return write_plots(report, rows, out)
