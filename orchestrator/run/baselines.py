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
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from orchestrator.agents.openai_policy import OpenAIPolicyConfig
from orchestrator.errors import ConfigError
from orchestrator.host.private_files import dump_json, save_figure, write_atomically
from orchestrator.local_model import LocalModelServer
from orchestrator.records.report import baseline_table, table_families
from orchestrator.records.summary import RunSummary
from orchestrator.run.config import RunConfig, load_config
from orchestrator.run.config_files import one_line, read_toml


class BaselineAgent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str
    label: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    openai: OpenAIPolicyConfig | None = None
    n: int | None = Field(None, ge=1)
    per_family: int | None = Field(None, ge=1)
    start: int | None = Field(None, ge=0)
    #: Any key of a run config for this agent only (over the shared [run]), such as
    #: a turn limit for a slow model or concurrency 1 for a one-request-at-a-time server.
    run: dict[str, Any] = Field(default_factory=dict)
    model_label: str | None = None
    provider_label: str | None = None
    #: Start the bundled llama.cpp server (SmolLM2-135M-Instruct) at the port of
    #: openai.base_url for this agent's run, and stop it afterwards.
    local_model: bool = False
    #: A GGUF file for that server to serve instead of the bundled weights, such as
    #: the SmolLM2 demo's trained model (scripts/grpo_demo.py writes one).
    local_model_file: Path | None = None

    @model_validator(mode="after")
    def _local_model_is_served_here(self) -> BaselineAgent:
        if self.local_model_file is not None:
            if not self.local_model:
                raise ValueError("local_model_file needs local_model = true")
            if not self.local_model_file.is_file():
                raise ValueError(f"local_model_file {self.local_model_file} is not a file")
        if not self.local_model:
            return self
        if self.agent != "openai" or self.openai is None:
            raise ValueError("local_model needs agent = 'openai' and an [agents.openai] table")
        url = urlsplit(self.openai.base_url)
        if url.hostname not in ("127.0.0.1", "localhost") or not url.port:
            raise ValueError(
                "local_model serves on this machine: openai.base_url must be "
                f"http://127.0.0.1:PORT/v1, got {self.openai.base_url!r}"
            )
        return self

    def local_server(self) -> LocalModelServer | None:
        """The server this agent's run needs started first (None for other agents)."""
        if not self.local_model or self.openai is None:
            return None
        port = urlsplit(self.openai.base_url).port
        return LocalModelServer(
            model=self.local_model_file, alias=self.openai.model, port=port or 0
        )

    @property
    def folder_name(self) -> str:
        name = self.label or self.model_label or self.agent
        return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:64] or "agent"


class BaselinesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path = Path("runs/baselines-{run_id}")
    run: dict[str, Any] = Field(default_factory=dict)
    agents: tuple[BaselineAgent, ...] = Field(min_length=1)
    #: One inspect_ai log per agent beside the table (the `inspect` extra).
    inspect_logs: bool = True


def load_baselines(path: Path, out: Path | None) -> BaselinesConfig:
    data = read_toml(path, "baselines config")
    if out is not None:
        data["out"] = str(out)
    try:
        config = BaselinesConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(one_line(exc, f"baselines config {path}", BaselinesConfig)) from exc
    names = [a.folder_name for a in config.agents]
    if len(set(names)) != len(names):
        raise ConfigError(f"baselines config {path}: agents need distinct labels, got {names}")
    return config


def run_configs(config: BaselinesConfig, folder: Path) -> list[RunConfig]:
    """One validated run config per agent (every error before any work)."""
    runs = []
    for entry in config.agents:
        overrides = {
            **entry.run,
            **entry.model_dump(
                exclude={"label", "openai", "local_model", "local_model_file", "run"},
                exclude_none=True,
            ),
        }
        if entry.openai is not None:
            overrides["openai"] = entry.openai.model_dump(exclude_none=True)
        overrides["out"] = str(folder / entry.folder_name)
        # the baselines write each agent's log beside the table, not in its run folder
        overrides["inspect_log"] = False
        try:
            run = load_config(None, {**config.run, **overrides})
            run.task_ids()
        except ConfigError as exc:
            raise ConfigError(f"agent {entry.folder_name}: {exc}") from exc
        runs.append(run)
    return runs


def render_table(summaries: list[RunSummary]) -> str:
    rows = baseline_table(summaries)
    rows += [
        "",
        "| Model | Attempts | Retry incidence | Failure classes |",
        "| --- | ---: | ---: | --- |",
    ]
    for s in summaries:
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s.failures_by_class.items()))
        rows.append(
            f"| `{s.model}` | {s.attempts} | {s.retry_incidence:.1%} | {failures or 'none'} |"
        )
    return "\n".join(rows) + "\n"


def write_plot(summaries: list[RunSummary], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from causal_gym.contracts.families import contract_of

    families = [contract_of(f) for f in table_families(summaries)]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(families)
    x = np.arange(len(summaries))
    for i, spec in enumerate(families):
        groups = [s.by_family.get(spec.name) for s in summaries]
        values = [g.mean_reward if g else None for g in groups]
        shown = [max(-2.0, v) if v is not None else 0.0 for v in values]
        offset = (i - (len(families) - 1) / 2) * width  # bars centred on the tick
        ax.bar(x + offset, shown, width * 0.9, label=spec.label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, [s.model for s in summaries], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("mean reward (clipped at -2 for display)")
    samples = sorted({s.sample for s in summaries})
    ax.set_title(
        f"Baselines on {samples[0]}"
        if len(samples) == 1
        else "Baselines (samples differ: see the table)"
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def write_outputs(summaries: list[RunSummary], folder: Path) -> str:
    table = render_table(summaries)
    write_atomically(folder / "baselines.md", table)
    dump_json(folder / "baselines.json", {"agents": [s.model_dump(mode="json") for s in summaries]})
    write_plot(summaries, folder / "baselines.png")
    return table
