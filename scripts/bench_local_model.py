"""Where an episode's time goes with a real model: the local llama.cpp server serving
SmolLM2-135M-Instruct, one episode per task, model time against tool time.

    .venv/bin/python scripts/bench_local_model.py [--per-family 2] [--max-tokens 256]
        [--max-turns 6] [--budget 200]

For each episode: its status, turns, prompt and completion tokens, wall time, the
time spent waiting for the model and the time spent running tools in the sandbox.
The ratio printed at the end (model time / tool time, summed over the same episodes
in this run) says where an optimisation would pay: with a CPU-served model nearly
all of an episode is the model. Install the server first:
`bash scripts/bootstrap.sh --local-model`.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from causal_gym.make import generate_task  # noqa: E402
from causal_gym.rng_keys.keys import resolve_key  # noqa: E402
from orchestrator.agents import (  # noqa: E402
    EpisodeConfig,
    OpenAIPolicyConfig,
    load_policy,
    run_episode,
)
from orchestrator.local_model import LocalModelServer  # noqa: E402
from orchestrator.sandbox import make_sandbox  # noqa: E402

FAMILIES = ("ate", "adjustment", "null_detect")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--budget", type=float, default=200.0, help="episode budget (s)")
    args = parser.parse_args()
    console = Console()
    key = resolve_key(environ={})
    table = Table(title="SmolLM2-135M-Instruct (Q4_1) on llama.cpp, bubblewrap sandbox")
    for column in ("task", "status", "turns", "prompt tok", "compl. tok", "wall s",
                   "model s", "tool s", "model/tool"):  # fmt: skip
        table.add_column(column, justify="right" if column != "task" else "left")
    model_total = tool_total = 0.0
    with LocalModelServer() as server:
        config = OpenAIPolicyConfig(
            base_url=server.base_url,
            model=server.alias,
            max_tokens=args.max_tokens,
            temperature=0.0,  # greedy: the same replies on every run
        )
        episode = EpisodeConfig(max_turns=args.max_turns, episode_timeout_s=args.budget)
        for family in FAMILIES:
            for index in range(args.per_family):
                task = generate_task(f"train:{family}:{index}", key)
                with load_policy("openai", config) as policy, make_sandbox("local") as box:
                    box.open(dict(task.public.files))
                    wire = task.public.to_wire(secrets.token_urlsafe(12))
                    with console.status(f"train:{family}:{index}"):
                        result = run_episode(wire, box, policy, episode)
                model_total += result.model_s
                tool_total += result.tool_s
                ratio = f"{result.model_s / result.tool_s:.0f}x" if result.tool_s else "no tool"
                table.add_row(
                    f"train:{family}:{index}", result.status.value, str(result.turns),
                    str(result.usage.prompt_tokens), str(result.usage.completion_tokens),
                    f"{result.wall_s:.1f}", f"{result.model_s:.1f}", f"{result.tool_s:.2f}",
                    ratio,
                )  # fmt: skip
    console.print(table)
    if tool_total == 0:
        console.print(f"model time {model_total:.1f} s; no tool ran, so there is no ratio")
        return 0
    share = model_total / (model_total + tool_total)
    console.print(
        f"model time {model_total:.1f} s, tool time {tool_total:.2f} s: the model is "
        f"{share:.1%} of the time the two take (ratio {model_total / tool_total:.0f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
