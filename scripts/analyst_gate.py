"""The warm start's gate, checked before any GRPO step: does the start sample the format
validly and every option often enough for GRPO to compare?

    python scripts/analyst_gate.py --adapter docs/demo/analyst/sft-random \
        --json docs/demo/analyst/gate.json [--tasks 30] [--rollouts 8]

On fresh-key tasks (a key made here), each task's rollouts sampled at the recipe's
temperature on llama.cpp, as GRPO's groups are. The registered bars
(analyst_recipe.py, preregistration.json): at least 0.98 of the rollouts valid,
a reward spread in at least 90% of the groups, every option of every decision sampled
at least 10% of the time (the effect probability's options: 0.1, 0.3, 0.5, 0.7, 0.9,
each value read as the nearest). Exit 1 when a bar is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from analyst_demo import (
    COLUMN_OPTIONS,
    ESTIMATOR_OPTIONS,
    PROBABILITY_OPTIONS,
    WIDTH_OPTIONS,
    analyst_spec,
    decision_of,
    load_tokenizer,
    play,
)
from analyst_llama import episode_seed, llama_writer, merged_gguf, open_llama
from analyst_recipe import RECIPE

from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import LocalSource

BARS = {"valid_share": 0.98, "groups_with_spread": 0.90, "option_share": 0.10}


def option_shares(decisions: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each decision's options and how often they were sampled (over the rollouts that
    made that decision)."""
    options = {
        "columns": list(COLUMN_OPTIONS),
        "estimator": list(ESTIMATOR_OPTIONS),
        "width": list(WIDTH_OPTIONS),
        "effect_probability": [str(p) for p in PROBABILITY_OPTIONS],
    }
    shares: dict[str, dict[str, float]] = {}
    for name, names in options.items():
        values = []
        for d in decisions:
            v = d[name]
            if v is None:
                continue
            if name == "effect_probability":
                v = str(min(PROBABILITY_OPTIONS, key=lambda o: abs(o - float(v))))
            values.append(str(v))
        shares[name] = {o: (values.count(o) / len(values) if values else 0.0) for o in names}
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--rollouts", type=int, default=RECIPE.generations)
    parser.add_argument("--work", type=Path, default=Path("runs/analyst/gate"))
    args = parser.parse_args()
    tok = load_tokenizer()
    gguf = merged_gguf(args.adapter, tok, args.work / "gguf")
    llm = open_llama(gguf)
    spec = analyst_spec(LocalSource(ANALYST_FAMILIES), args.rollouts)
    env = spec.environment_factory()
    groups: list[list[dict[str, Any]]] = []
    began = time.monotonic()
    try:
        for slot in range(args.tasks):
            group = []
            for r in range(args.rollouts):
                write = llama_writer(
                    llm, tok.eos_token_id, RECIPE.temperature, episode_seed("gate", slot, r)
                )
                episode = play(tok, spec, env, slot, write)
                group.append(
                    {
                        **episode.record,
                        "decisions": decision_of(episode.record),
                        "turns": episode.turns,
                    }
                )
            groups.append(group)
            print(
                f"  {slot + 1}/{args.tasks} groups, {time.monotonic() - began:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        llm.close()
        spec.close()
    rollouts = [r for g in groups for r in g]
    valid = sum(r["valid"] for r in rollouts) / len(rollouts)
    spread = sum(
        max(r["clipped_reward"] for r in g) - min(r["clipped_reward"] for r in g) > 1e-9
        for g in groups
    ) / len(groups)
    shares = option_shares([r["decisions"] for r in rollouts])
    lowest = min(v for options in shares.values() for v in options.values())
    checks = {
        "valid_share": {
            "value": valid,
            "bar": BARS["valid_share"],
            "pass": valid >= BARS["valid_share"],
        },
        "groups_with_spread": {
            "value": spread,
            "bar": BARS["groups_with_spread"],
            "pass": spread >= BARS["groups_with_spread"],
        },
        "lowest_option_share": {
            "value": lowest,
            "bar": BARS["option_share"],
            "pass": lowest >= BARS["option_share"],
        },
    }
    report = {
        "command": " ".join(["python", *sys.argv]),
        "adapter": str(args.adapter),
        "temperature": RECIPE.temperature,
        "tasks": args.tasks,
        "rollouts_per_task": args.rollouts,
        "families": {f: sum(g[0]["family"] == f for g in groups) for f in ANALYST_FAMILIES},
        "mean_clipped_reward": sum(r["clipped_reward"] for r in rollouts) / len(rollouts),
        "option_shares": shares,
        "checks": checks,
        "pass": all(c["pass"] for c in checks.values()),
        "rollouts": [
            {k: r[k] for k in ("family", "valid", "clipped_reward", "decisions", "turns")}
            for r in rollouts
        ],
    }
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    for name, c in checks.items():
        print(f"{name}: {c['value']:.3f} (bar {c['bar']}): {'pass' if c['pass'] else 'FAIL'}")
    print(json.dumps(shares))
    raise SystemExit(0 if report["pass"] else 1)


if __name__ == "__main__":
    main()
