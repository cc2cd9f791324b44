"""The shareable outputs of a run, computed from results.jsonl alone.

summary.json, report.md and the PNGs are meant to be published: they hold aggregates
(per family, per tier, per failure class, timing percentiles), the run's labels and
its key fingerprint, and never a task id, a per-task number or the key. Only final
attempts count toward rewards; every attempt counts toward retry incidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from causal_gym.families.registry import contract_of
from causal_gym.scoring.version import REWARD_VERSION, UNVERSIONED
from causal_gym.task_id import EVAL_V1_FAMILIES, FAMILIES
from orchestrator.run.records import ScoredEpisode
from orchestrator.run.results import dump_json, save_figure, write_atomically


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _group(records: list[ScoredEpisode], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in sorted({getattr(r, key) for r in records}):
        group = [r for r in records if getattr(r, key) == name]
        covered = [_coverage(r) for r in group if r.covered is not None]
        out[name] = {
            "n": len(group),
            "mean_reward": _mean([r.reward for r in group]),
            "mean_clipped_reward": _mean([r.clipped_reward for r in group]),
            "coverage": _mean([float(c) for c in covered]),
            "submitted": _mean([float(r.submitted) for r in group]),
        }
    return out


def _timing(records: list[ScoredEpisode]) -> dict[str, dict[str, float]]:
    timing = {}
    for name in ("wall_s", "model_s", "tool_s", "overhead_s"):
        values = np.array([getattr(r, name) for r in records], dtype=float)
        if values.size:
            timing[name] = {
                "mean": float(values.mean()),
                "p50": float(np.percentile(values, 50)),
                "p90": float(np.percentile(values, 90)),
            }
    return timing


def reward_version(records: Sequence[ScoredEpisode], default: int = REWARD_VERSION) -> int:
    """The one reward version the records were scored with (`default` for none):
    rewards of two versions are different quantities, never averaged together."""
    versions = {r.reward_version for r in records}
    if len(versions) > 1:
        listed = ", ".join(str(v) for v in sorted(versions))
        raise ValueError(f"the records mix reward versions {listed}: report them apart")
    return versions.pop() if versions else default


def summarize(records: list[ScoredEpisode], meta: dict[str, Any]) -> dict[str, Any]:
    final = [r for r in records if r.final]
    classes: dict[str, int] = {}
    retried_tasks = {r.task_id for r in records if not r.final}
    for r in records:
        if r.failure_class is not None:
            classes[r.failure_class.value] = classes.get(r.failure_class.value, 0) + 1
    covered = [_coverage(r) for r in final if r.covered is not None]
    return {
        **meta,
        "reward_version": reward_version(records, meta.get("reward_version", REWARD_VERSION)),
        "episodes": len(final),
        "attempts": len(records),
        "mean_reward": _mean([r.reward for r in final]),
        "mean_clipped_reward": _mean([r.clipped_reward for r in final]),
        "coverage": _mean(covered),
        "by_family": _group(final, "family"),
        "by_tier": _group(final, "tier"),
        "final_status": {
            s: sum(1 for r in final if str(r.status) == s)
            for s in sorted({str(r.status) for r in final})
        },
        "failures_by_class": classes,
        "retry_incidence": len(retried_tasks) / len(final) if final else 0.0,
        "retried_tasks": len(retried_tasks),
        "timing": _timing(final),
        "tokens": {
            "prompt": sum(r.usage.prompt_tokens for r in records),
            "completion": sum(r.usage.completion_tokens for r in records),
        },
    }


def _coverage(record: ScoredEpisode) -> float:
    """The record's share of covering intervals (older records: its `covered` flag)."""
    return record.coverage if record.coverage is not None else float(bool(record.covered))


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def table_families(summaries: list[dict[str, Any]]) -> list[str]:
    """The families a baseline table shows: those any summary has results for, in
    registry order (an eval-v1 table keeps its three columns, eval-v2 gets its own)."""
    seen = {family for s in summaries for family in s["by_family"]}
    return [f for f in FAMILIES if f in seen] or list(EVAL_V1_FAMILIES)


#: The baseline table's expert-tier column: mean reward over a run's expert tasks
#: (all of eval-expert-v1; about a fifth of the expert families' train tasks).
EXPERT_COLUMN = "Expert tier"


def has_expert(summaries: list[dict[str, Any]]) -> bool:
    return any("expert" in s.get("by_tier", {}) for s in summaries)


#: The column naming how a model agent was asked for tool calls (openai_policy's
#: ToolChoice): shown once any run in the table is a model run that records it.
TOOL_CHOICE_COLUMN = "Tool choice"


#: The reward version each row was scored with (scoring/version.py); a summary from
#: before versions existed shows 1.
REWARD_COLUMN = "Reward version"


def has_tool_choice(summaries: list[dict[str, Any]]) -> bool:
    return any(s.get("tool_choice") for s in summaries)


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


def baseline_row(
    summary: dict[str, Any], families: list[str], expert: bool = False, tools: bool = False
) -> str:
    by_family = summary["by_family"]
    tier = [_cell(summary.get("by_tier", {}).get("expert", {}).get("mean_reward"))]
    choice = [f"`{summary['tool_choice']}`" if summary.get("tool_choice") else "-"]
    cells = [
        f"`{summary['model']}`",
        summary["provider"],
        *(choice if tools else []),
        summary["sample"],
        str(summary["episodes"]),
        _cell(summary["mean_reward"]),
        *(_cell(by_family.get(f, {}).get("mean_reward")) for f in families),
        *(tier if expert else []),
        _cell(summary["coverage"]),
        str(summary.get("reward_version", UNVERSIONED)),
    ]
    return "| " + " | ".join(cells) + " |"


def baseline_table(summaries: list[dict[str, Any]]) -> list[str]:
    """The header and one row per summary; the expert-tier column when any summary
    has expert tasks."""
    families, expert, tools = (
        table_families(summaries), has_expert(summaries), has_tool_choice(summaries)
    )  # fmt: skip
    return [
        baseline_header(families, expert, tools),
        *(baseline_row(s, families, expert, tools) for s in summaries),
    ]


def render_markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"# causal-gym run {summary['run_id']}",
        "",
        f"Agent `{summary['agent']}` on `{summary['sample']}` in the `{summary['sandbox']}` "
        f"sandbox; key fingerprint `{summary['key_fingerprint']}`; reward version "
        f"{summary.get('reward_version', UNVERSIONED)}."
        + (
            f" Tool choice `{summary['tool_choice']}` (see the README's agent section: a "
            "forced call changes what a score means)."
            if summary.get("tool_choice")
            else ""
        ),
        "",
        *baseline_table([summary]),
        "",
        "## Episodes and retries",
        "",
        f"{summary['episodes']} tasks finished in {summary['attempts']} attempts; "
        f"{summary['retried_tasks']} tasks were retried "
        f"(retry incidence {summary['retry_incidence']:.1%}).",
        "",
        "| failure class | attempts |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in sorted(summary["failures_by_class"].items())),
        "",
        "| final status | tasks |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in summary["final_status"].items()),
        "",
        "## By tier",
        "",
        "| tier | n | mean reward | coverage |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| {tier} | {g['n']} | {_cell(g['mean_reward'])} | {_cell(g['coverage'])} |"
            for tier, g in summary["by_tier"].items()
        ),
        "",
        "## Timing (seconds per episode)",
        "",
        "| measure | mean | p50 | p90 |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| {name} | {t['mean']:.3f} | {t['p50']:.3f} | {t['p90']:.3f} |"
            for name, t in summary["timing"].items()
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
    families = [f for f in FAMILIES if any(r.family == f for r in final)]
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
        flags = [_coverage(r) for r in final if r.family == family and r.covered is not None]
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


def write_outputs(records: list[ScoredEpisode], meta: dict[str, Any], out: Path) -> dict[str, Any]:
    summary = summarize(records, meta)
    dump_json(out / "summary.json", summary)
    write_atomically(out / "report.md", render_markdown(summary))
    write_plots(records, out)
    return summary
