"""Baseline tables: several agents over the same sample, one table.

A baselines config is a shared run config (`[run]`) plus a list of agents
(`[[agents]]`), each of which may override the sample or name an OpenAI-compatible
endpoint. Every agent is an ordinary run in its own folder under the baselines
folder (so each one is durable and resumable on its own); the table, its JSON and a
PNG are written from their summaries.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.run.config import ConfigError, RunConfig, load_config, read_toml
from orchestrator.run.report import BASELINE_HEADER, baseline_row
from orchestrator.run.results import dump_json, write_atomically


class BaselineAgent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    label: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    openai: OpenAIPolicyConfig | None = None
    n: int | None = Field(None, ge=1)
    per_family: int | None = Field(None, ge=1)
    start: int | None = Field(None, ge=0)
    model_label: str | None = None
    provider_label: str | None = None

    @property
    def folder_name(self) -> str:
        name = self.label or self.model_label or self.agent
        return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:64] or "agent"


class BaselinesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path = Path("runs/baselines-{run_id}")
    run: dict[str, Any] = Field(default_factory=dict)
    agents: tuple[BaselineAgent, ...] = Field(min_length=1)


def load_baselines(path: Path, out: Path | None) -> BaselinesConfig:
    data = read_toml(path, "baselines config")
    if out is not None:
        data["out"] = str(out)
    try:
        config = BaselinesConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ConfigError(f"baselines config {path}: {problems}") from exc
    names = [a.folder_name for a in config.agents]
    if len(set(names)) != len(names):
        raise ConfigError(f"baselines config {path}: agents need distinct labels, got {names}")
    return config


def run_configs(config: BaselinesConfig, folder: Path) -> list[RunConfig]:
    """One validated run config per agent (every error before any work)."""
    runs = []
    for entry in config.agents:
        overrides = entry.model_dump(exclude={"label", "openai"}, exclude_none=True)
        if entry.openai is not None:
            overrides["openai"] = entry.openai.model_dump(exclude_none=True)
        overrides["out"] = str(folder / entry.folder_name)
        try:
            run = load_config(None, {**config.run, **overrides})
            run.task_ids()
        except ConfigError as exc:
            raise ConfigError(f"agent {entry.folder_name}: {exc}") from exc
        runs.append(run)
    return runs


def render_table(summaries: list[dict[str, Any]]) -> str:
    rows = [BASELINE_HEADER, *(baseline_row(s) for s in summaries)]
    rows += [
        "",
        "| Model | Attempts | Retry incidence | Failure classes |",
        "| --- | ---: | ---: | --- |",
    ]
    for s in summaries:
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s["failures_by_class"].items()))
        rows.append(
            f"| `{s['model']}` | {s['attempts']} | {s['retry_incidence']:.1%} | "
            f"{failures or 'none'} |"
        )
    return "\n".join(rows) + "\n"


def write_plot(summaries: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    families = ("ate", "adjustment", "null_detect")
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(families)
    x = np.arange(len(summaries))
    for i, family in enumerate(families):
        values = [s["by_family"].get(family, {}).get("mean_reward") for s in summaries]
        shown = [max(-2.0, v) if v is not None else 0.0 for v in values]
        ax.bar(x + (i - 1) * width, shown, width * 0.9, label=family)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, [s["model"] for s in summaries], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("mean reward (clipped at -2 for display)")
    ax.set_title(f"Baselines on {summaries[0]['sample'] if summaries else ''}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(summaries: list[dict[str, Any]], folder: Path) -> str:
    table = render_table(summaries)
    write_atomically(folder / "baselines.md", table)
    dump_json(folder / "baselines.json", {"agents": summaries})
    write_plot(summaries, folder / "baselines.png")
    return table
