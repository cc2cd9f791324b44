"""The analyst run's held-out evaluation, as pre-registered: every arm answers the same
registered tasks greedily, and the registration's rules are applied.

    python scripts/analyst_eval.py --key runs/analyst/heldout.key --work runs/analyst/eval \
        --arm start=docs/demo/analyst/sft-random --arm grpo=docs/demo/analyst/grpo/checkpoint \
        --arm sft-reference=docs/demo/analyst/sft-reference \
        --arm placebo=docs/demo/analyst/placebo/checkpoint \
        --json docs/demo/analyst/evaluation.json --inspect docs/demo/analyst/inspect

Model arms (LoRA adapters merged into SmolLM2 and run on llama.cpp) and scripted arms
(random decisions, the best single decision of decision_values.json, the context rule,
the reference analyst's own answer) answer each task under a handle of their own from
one group, so every difference is paired. The tasks are regenerated from the held-out
key and checked against the registered digests, in order. Writes the per-task rows,
each arm's summary, the paired differences against the start (pooled and per family),
the context checks, the placebo check and the verdict; and an inspect_ai log per model
arm.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import statistics
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
    scripted_writer,
)
from analyst_llama import llama_writer, merged_gguf, open_llama
from grpo_inspect import write_log
from smollm2_demo import Evaluation

from causal_gym.reference.answer import files_answer
from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import LocalSource

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "demo" / "analyst"
SCRIPTED = ("random decisions", "best single decision", "context rule", "reference analyst")


def paired(
    rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]], field: str = "clipped_reward"
) -> dict[str, Any]:
    """a - b on the same tasks: mean, SE, and per family."""
    if [r["task_digest"] for r in rows_a] != [r["task_digest"] for r in rows_b]:
        raise SystemExit("analyst_eval: two arms did not answer the same tasks")

    def stats(pairs: list[tuple[float, float]]) -> dict[str, float]:
        diffs = [float(a) - float(b) for a, b in pairs]
        n = len(diffs)
        se = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else float("nan")
        return {"tasks": n, "mean": statistics.fmean(diffs), "se": se}

    pairs = [(a[field], b[field]) for a, b in zip(rows_a, rows_b, strict=True)]
    out: dict[str, Any] = stats(pairs)
    out["families"] = {
        f: stats([p for p, r in zip(pairs, rows_a, strict=True) if r["family"] == f])
        for f in ANALYST_FAMILIES
    }
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    rewards = [r["clipped_reward"] for r in rows]
    n = len(rows)
    share = sum(r["valid"] for r in rows) / n
    return {
        "tasks": n,
        "valid_share": share,
        "mean_clipped_reward": statistics.fmean(rewards),
        "mean_clipped_reward_se": statistics.stdev(rewards) / math.sqrt(n),
        "families": {
            f: statistics.fmean(r["clipped_reward"] for r in rows if r["family"] == f)
            for f in ANALYST_FAMILIES
        },
    }


def context_checks(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The registered context checks on one arm's rows."""

    def share(subset: list[dict[str, Any]]) -> float:
        return sum(r["decisions"]["estimator"] == "aipw" for r in subset) / max(1, len(subset))

    line = [r for r in rows if r["nonlinear"]]
    plain = [r for r in rows if not r["nonlinear"]]
    tier = share(line) - share(plain)
    nulls = [
        r
        for r in rows
        if r["family"] == "null_detect"
        and r["decisions"]["effect_probability"] is not None
        and r["fit_p_value"] is not None
    ]
    strong = [float(r["decisions"]["effect_probability"]) for r in nulls if r["fit_p_value"] < 0.01]
    weak = [float(r["decisions"]["effect_probability"]) for r in nulls if r["fit_p_value"] > 0.1]
    evidence = (statistics.fmean(strong) - statistics.fmean(weak)) if strong and weak else None
    widths = {
        ctx: {
            w: sum(r["decisions"]["width"] == w for r in s) / max(1, len(s)) for w in WIDTH_OPTIONS
        }
        for ctx, s in (("nonlinear line", line), ("no such line", plain))
    }
    return {
        "tier_line": {
            "aipw_share_with_line": share(line),
            "aipw_share_without": share(plain),
            "difference": tier,
            "bar": 0.5,
            "pass": tier >= 0.5,
            "tasks_with_line": len(line),
        },
        "evidence": {
            "mean_p_when_fit_p_below_0.01": statistics.fmean(strong) if strong else None,
            "mean_p_when_fit_p_above_0.1": statistics.fmean(weak) if weak else None,
            "difference": evidence,
            "bar": 0.3,
            "pass": evidence is not None and evidence >= 0.3,
            "tasks": [len(strong), len(weak)],
        },
        "width_by_line": widths,
    }


def scripted_decisions(
    name: str, task: Any, env: Any, turn: int, best: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    family = task.family.value
    nonlinear = "- Functional form:" in task.files["README.md"].decode()
    if name == "random decisions":
        return {
            "columns": rng.choice(sorted(COLUMN_OPTIONS)),
            "estimator": rng.choice(ESTIMATOR_OPTIONS),
            "width": rng.choice(WIDTH_OPTIONS),
            "effect_probability": rng.choice(PROBABILITY_OPTIONS)
            if family == "null_detect"
            else None,
        }
    if name == "best single decision":
        return dict(best[family])
    p = None
    fit = env._session.analyst.last_fit if env._session.analyst else None
    if family == "null_detect" and turn == 1 and fit is not None and fit.estimate is not None:
        z = abs(fit.estimate / fit.se) if fit.se else 0.0
        p = 0.1 if z < 1 else 0.3 if z < 2 else 0.7 if z < 3 else 0.9
    return {
        "columns": "pre",
        "estimator": "aipw" if nonlinear else "ols",
        "width": "standard",
        "effect_probability": p if family == "null_detect" else None,
    }


def run_arm(
    name: str,
    adapter: Path | None,
    spec: Any,
    env: Any,
    tok: Any,
    tasks: int,
    work: Path,
    best: dict[str, Any],
) -> tuple[list[dict[str, Any]], Evaluation | None]:
    rows: list[dict[str, Any]] = []
    prompts, completions = [], []
    llm = open_llama(merged_gguf(adapter, tok, work / name)) if adapter is not None else None
    rng = random.Random(f"analyst-eval:{name}")
    began = time.monotonic()
    try:
        for slot in range(tasks):
            if name == "reference analyst":
                task, handle = spec.board.claim(slot)
                score = spec.source.score(handle, files_answer(dict(task.files)))
                record = {
                    "family": task.family.value,
                    "valid": score.valid,
                    "clipped_reward": score.clipped_reward,
                    "fit": None,
                    "report": None,
                    "task_digest": hashlib.sha256(task.files["data.csv"]).hexdigest(),
                }
                readme = task.files["README.md"].decode()
            else:
                if llm is not None:
                    write = llama_writer(llm, tok.eos_token_id, 0.0, 0)
                else:

                    def decide(turn: int) -> dict[str, Any]:
                        return scripted_decisions(name, env._session.task, env, turn, best, rng)

                    write = scripted_writer(tok, decide)
                episode = play(tok, spec, env, slot, write)
                record = episode.record
                readme = env._session.task.files["README.md"].decode()
                prompts.append(tok.decode(episode.prompt))
                completions.append(tok.decode(episode.completion))
            fit = record.get("fit") or {}
            rows.append(
                {
                    "task_digest": record["task_digest"],
                    "family": record["family"],
                    "nonlinear": "- Functional form:" in readme,
                    "valid": bool(record["valid"]),
                    "clipped_reward": float(record["clipped_reward"]),
                    "decisions": decision_of(record),
                    "fit_p_value": fit.get("p_value"),
                }
            )
            if (slot + 1) % 25 == 0:
                mean = statistics.fmean(r["clipped_reward"] for r in rows)
                print(
                    f"  {name}: {slot + 1}/{tasks}, mean {mean:+.3f}, "
                    f"{time.monotonic() - began:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if llm is not None:
            llm.close()
    evaluation = None
    if adapter is not None:
        evaluation = Evaluation(
            label=name,
            valid=tuple(r["valid"] for r in rows),
            rewards=tuple(r["clipped_reward"] for r in rows),
            families=tuple(r["family"] for r in rows),
            seconds=time.monotonic() - began,
            digests=tuple(r["task_digest"] for r in rows),
            prompts=tuple(prompts),
            completions=tuple(completions),
        )
    return rows, evaluation


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """The registered rules applied to the evaluation."""
    out: dict[str, Any] = {}
    arms = report["arms"]
    if "grpo" in arms and "start" in arms:
        gain = report["paired_vs_start"]["grpo"]
        valid = report["paired_valid_vs_start"]["grpo"]
        out["success"] = {
            "gain": gain["mean"],
            "se": gain["se"],
            "above_2_se": gain["mean"] > 2 * gain["se"],
            "valid_share_change": valid["mean"],
            "valid_se": valid["se"],
            "valid_not_down": valid["mean"] + 2 * valid["se"] >= 0,
        }
        out["success"]["met"] = out["success"]["above_2_se"] and out["success"]["valid_not_down"]
        out["context"] = {k: v["pass"] for k, v in report["context"]["grpo"].items() if "pass" in v}
    if "placebo" in arms and "start" in arms:
        p = report["paired_vs_start"]["placebo"]
        out["placebo_does_not_gain"] = not (p["mean"] > 2 * p["se"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", type=Path, required=True)
    parser.add_argument("--prereg", type=Path, default=DOCS / "preregistration.json")
    parser.add_argument("--arm", action="append", default=[], help="NAME=ADAPTER_DIR")
    parser.add_argument("--tasks", type=int, default=None)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--inspect", type=Path)
    parser.add_argument("--no-scripted", action="store_true")
    args = parser.parse_args()
    prereg = json.loads(args.prereg.read_text())
    registered = prereg["held_out"]["tasks"]
    tasks = args.tasks or len(registered)
    models = []
    for item in args.arm:
        name, _, folder = item.partition("=")
        if not name or not Path(folder, "adapter_model.safetensors").is_file():
            parser.error(f"--arm NAME=ADAPTER_DIR with an adapter_model.safetensors, not {item!r}")
        models.append((name, Path(folder)))
    arms: list[tuple[str, Path | None]] = [
        *models,
        *([] if args.no_scripted else [(s, None) for s in SCRIPTED]),
    ]
    best_table = json.loads((DOCS / "decision_values.json").read_text())["ladder"]
    best = {r["family"]: r["decision"] for r in best_table if "decision" in r}
    tok = load_tokenizer()
    source = LocalSource(ANALYST_FAMILIES, key_file=args.key)
    if source.key_fingerprint != prereg["held_out"]["key_fingerprint"]:
        parser.error("the key is not the registered held-out key (its fingerprint differs)")
    spec = analyst_spec(source, len(arms))
    env = spec.environment_factory()
    rows: dict[str, list[dict[str, Any]]] = {}
    evaluations: dict[str, Evaluation] = {}
    try:
        for name, adapter in arms:
            rows[name], evaluation = run_arm(name, adapter, spec, env, tok, tasks, args.work, best)
            if evaluation is not None:
                evaluations[name] = evaluation
            digests = [r["task_digest"] for r in rows[name]]
            if digests != [t["task_digest"] for t in registered[:tasks]]:
                raise SystemExit(f"analyst_eval: arm {name} did not answer the registered tasks")
    finally:
        spec.close()
    report: dict[str, Any] = {
        "command": " ".join(["python", *sys.argv]),
        "key_fingerprint": source.key_fingerprint,
        "arms": {n: summary(r) for n, r in rows.items()},
        "per_task": rows,
    }
    if "start" in rows:
        report["paired_vs_start"] = {
            n: paired(r, rows["start"]) for n, r in rows.items() if n != "start"
        }
        report["paired_valid_vs_start"] = {
            n: paired(r, rows["start"], "valid") for n, r in rows.items() if n != "start"
        }
    report["context"] = {n: context_checks(r) for n, r in rows.items()}
    report["verdict"] = verdict(report)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    if args.inspect is not None:
        args.inspect.mkdir(parents=True, exist_ok=True)
        for name, evaluation in evaluations.items():
            write_log(evaluation, args.inspect / f"{name}.eval", {"recipe": prereg["recipe"]})
    for name, s in report["arms"].items():
        print(
            f"{name}: valid {s['valid_share']:.3f}, reward {s['mean_clipped_reward']:+.3f} "
            f"± {s['mean_clipped_reward_se']:.3f}"
        )
    print(json.dumps(report["verdict"], indent=1))


if __name__ == "__main__":
    main()
