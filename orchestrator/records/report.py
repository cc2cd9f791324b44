"""The shareable outputs of a run, computed from results.jsonl alone.

summary.json, report.md and the PNGs are meant to be published: they hold aggregates
(per family, per tier, per failure class, timing percentiles), the run's labels and
its key fingerprint, and never a task id, a per-task number or the key. Only final
attempts count toward rewards; every attempt counts toward retry incidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from causal_gym.contracts.families import contract_of, family_names, split_families
from orchestrator.host.private_files import save_figure, write_atomically
from orchestrator.records.summary import RunSummary, coverage_share, summarize
from orchestrator.records.types import ScoredEpisode


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def table_families(summaries: list[RunSummary]) -> list[str]:
    """The families a baseline table shows: those any summary has results for, in
    registry order (an eval-v1 table keeps its three columns, eval-v2 gets its own)."""
    seen = {family for s in summaries for family in s.by_family}
    return [f for f in family_names() if f in seen] or list(split_families("eval-v1"))


#: The baseline table's expert-tier column: mean reward over a run's expert tasks
#: (all of eval-expert-v1; about a fifth of the expert families' train tasks).
EXPERT_COLUMN = "Expert tier"


def has_expert(summaries: list[RunSummary]) -> bool:
    return any("expert" in s.by_tier for s in summaries)


#: The column naming how a model agent was asked for tool calls (openai_policy's
#: ToolChoice): shown once any run in the table is a model run that records it.
TOOL_CHOICE_COLUMN = "Tool choice"


#: The reward version each row was scored with (scoring/version.py); a summary from
#: before versions existed shows 1.
REWARD_COLUMN = "Reward version"


def has_tool_choice(summaries: list[RunSummary]) -> bool:
    return any(s.tool_choice for s in summaries)


def baseline_header(families: list[str], expert: bool = False, tools: bool = False) -> str:
    labels = [contract_of(f).label for f in families]
    tier = [EXPERT_COLUMN] if expert else []
    choice = [TOOL_CHOICE_COLUMN] if tools else []
    columns = ["Model", "Provider", *choice, "Sample", "n", "Mean reward", *labels, *tier,
               "Coverage", REWARD_COLUMN]  # fmt: skip
    text = len(columns) - (4 + len(labels) + len(tier))  # left-aligned: up to Sample
    return (
        "| " + " | ".join(columns) + " |\n|" + " --- |" * text
        + " ---: |" * (len(columns) - text)
    )  # fmt: skip


def _family_cell(summary: RunSummary, family: str) -> str:
    group = summary.by_family.get(family)
    return _cell(group.mean_reward if group else None)


def baseline_row(
    summary: RunSummary, families: list[str], expert: bool = False, tools: bool = False
) -> str:
    expert_group = summary.by_tier.get("expert")
    tier = [_cell(expert_group.mean_reward if expert_group else None)]
    choice = [f"`{summary.tool_choice}`" if summary.tool_choice else "-"]
    cells = [
        f"`{summary.model}`",
        summary.provider,
        *(choice if tools else []),
        summary.sample,
        str(summary.episodes),
        _cell(summary.mean_reward),
        *(_family_cell(summary, f) for f in families),
        *(tier if expert else []),
        _cell(summary.coverage),
        str(summary.reward_version),
    ]
    return "| " + " | ".join(cells) + " |"


def baseline_table(summaries: list[RunSummary]) -> list[str]:
    """The header and one row per summary; the expert-tier column when any summary
    has expert tasks."""
    families, expert, tools = (
        table_families(summaries), has_expert(summaries), has_tool_choice(summaries)
    )  # fmt: skip
    return [
        baseline_header(families, expert, tools),
        *(baseline_row(s, families, expert, tools) for s in summaries),
    ]


def _failure_table(failures: dict[str, int]) -> list[str]:
    """The attempts that brought back no episode, by class; a sentence when there were
    none (an empty table reads as a rendering fault)."""
    if not failures:
        return ["No failures: every attempt brought back an episode."]
    return [
        "| failure class | attempts |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in sorted(failures.items())),
    ]


def render_markdown(summary: RunSummary) -> str:
    lines = [
        f"# causal-gym run {summary.run_id}",
        "",
        f"Agent `{summary.agent}` on `{summary.sample}` in the `{summary.sandbox}` "
        f"sandbox; key fingerprint `{summary.key_fingerprint}`; reward version "
        f"{summary.reward_version}."
        + (
            f" Tool choice `{summary.tool_choice}` (see the docs' agent episodes page: a "
            "forced call changes what a score means)."
            if summary.tool_choice
            else ""
        ),
        "",
        *baseline_table([summary]),
        "",
        "## Episodes and retries",
        "",
        f"{summary.episodes} tasks finished in {summary.attempts} attempts; "
        f"{summary.retried_tasks} tasks were retried "
        f"(retry incidence {summary.retry_incidence:.1%}).",
        "",
        *_failure_table(summary.failures_by_class),
        "",
        "| final status | tasks |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in summary.final_status.items()),
        "",
        "## By tier",
        "",
        "| tier | n | mean reward | coverage |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| {tier} | {g.n} | {_cell(g.mean_reward)} | {_cell(g.coverage)} |"
            for tier, g in summary.by_tier.items()
        ),
        "",
        "## Timing (seconds per episode)",
        "",
        "| measure | mean | p50 | p90 |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| {name} | {t.mean:.3f} | {t.p50:.3f} | {t.p90:.3f} |"
            for name, t in summary.timing.items()
        ),
        "",
        "Plots: `reward_by_family.png`, `width_ratio.png`, `coverage_by_family.png`.",
        "",
    ]
    return "\n".join(lines)


def write_plots(records: list[ScoredEpisode], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    final = [r for r in records if r.final]
    families = [f for f in family_names() if any(r.family == f for r in final)]
    paths = [out / "reward_by_family.png", out / "width_ratio.png", out / "coverage_by_family.png"]

    fig, ax = plt.subplots(figsize=(7, 4))
    data = [[max(-1.0, r.reward) for r in final if r.family == f] for f in families]
    if data:
        ax.boxplot(data, showfliers=True)
        ax.set_xticks(range(1, len(families) + 1), families)
    ax.set_ylabel("reward (clipped at -1 for display)")
    ax.set_title("Reward by family")
    fig.tight_layout()
    save_figure(fig, paths[0])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    ratios = [r.width_ratio for r in final if r.width_ratio is not None]
    ax.hist(np.clip(ratios, 0, 5), bins=[i / 8 for i in range(41)], color="#4c72b0")
    ax.axvline(1.0, color="black", linestyle="--", label="reference width")
    ax.set_xlabel("interval width / reference width (clipped at 5)")
    ax.set_ylabel("episodes")
    ax.set_title("Submitted interval widths")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, paths[1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    coverage = []
    for family in families:
        flags = [coverage_share(r) for r in final if r.family == family and r.covered is not None]
        coverage.append(float(np.mean(flags)) if flags else 0.0)
    ax.bar(families, coverage, color="#4c72b0")
    ax.axhline(0.90, color="green", linestyle="--", label="nominal 90%")
    ax.set_ylim(0, 1)
    ax.set_ylabel("interval coverage")
    ax.set_title("Coverage by family")
    ax.legend(loc="lower right")
    fig.tight_layout()
    save_figure(fig, paths[2])
    plt.close(fig)
    return paths


def write_outputs(records: list[ScoredEpisode], labels: dict[str, Any], out: Path) -> RunSummary:
    summary = summarize(records, labels)
    write_atomically(out / "summary.json", summary.model_dump_json(indent=2) + "\n")
    write_atomically(out / "report.md", render_markdown(summary))
    write_plots(records, out)
    return summary
