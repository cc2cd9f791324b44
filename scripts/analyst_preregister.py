"""Write the analyst run's pre-registration before any GRPO step: the recipe, the step
budget, the held-out sample, the go/no-go and the decision rules.

    python scripts/analyst_preregister.py --key runs/analyst/heldout.key \
        --out docs/demo/analyst/preregistration.json

The held-out sample is fixed here: a key made for it (written to `--key`, a new 0600
file that stays on this machine and out of the repository), and the data.csv digests
of its first `held_out_tasks` tasks (the seed families in turn), so the evaluation can
show it answered exactly these tasks, and no training task is among them. The
registration is committed before training starts; analyst_eval.py applies its rules
to the evaluation and says which were met.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from analyst_gate import BARS
from analyst_recipe import RECIPE

from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import LocalSource

RULES = {
    "success": (
        "On the held-out sample, each task answered greedily by the start (the random-decision "
        "warm start) and by the policy after the registered steps (or the last checkpoint, if the "
        "go/no-go stopped the run): the paired mean of (trained - start) clipped reward is above 2 "
        "paired SE, and the valid share is not down (its paired difference is not below zero by "
        "more than 2 SE). Both are reported per family too; the bar is on the pooled sample."
    ),
    "go_no_go": (
        f"At step {RECIPE.go_step}, P(the fit adjusts for pre_treatment) averaged over the "
        f"{RECIPE.probe_prompts} probe prompts (docs/demo/analyst/probe_prompts.json, "
        f"teacher-forced) has risen by at least {RECIPE.go_min_rise} over step 0's; if not, "
        "the run stops there and the last checkpoint is evaluated as registered."
    ),
    "context_tier_line": (
        "Where the README says relationships may be nonlinear, AIPW is the better estimator "
        "(decision_values.md): the trained policy's share of AIPW on held-out tasks with that "
        "line minus its share on tasks without it is at least 0.5. One estimator for every task "
        "scores 0."
    ),
    "context_evidence": (
        "On held-out null_detect tasks, the trained policy's mean effect probability where its "
        "fit's p-value is below 0.01 minus its mean where the p-value is above 0.1 is at least "
        "0.3. One probability for every task scores 0."
    ),
    "placebo": (
        f"A run of {RECIPE.placebo_steps} steps from the same start with each group's rewards "
        "shuffled among its rollouts does not gain: its paired difference against the start on "
        "the held-out sample is not above 2 SE."
    ),
    "third_arm": (
        "An SFT of the reference's decisions (the pre-treatment columns, AIPW where the README "
        "says nonlinear, the standard width, the reference's effect probability) from the same "
        "base, answered on the same held-out tasks; reported, no bar."
    ),
    "ladder": (
        "Scripted arms on the same held-out tasks place the policy: random decisions, the best "
        "single decision per family (decision_values.json), the context rule, the reference "
        "analyst."
    ),
    "warm_start_gate": (
        f"Before any GRPO step, the start at temperature {RECIPE.temperature} on 30 fresh tasks x "
        f"{RECIPE.generations} rollouts: valid share >= {BARS['valid_share']}, reward spread in >= "
        f"{BARS['groups_with_spread']} of groups, every option sampled >= {BARS['option_share']} "
        "(docs/demo/analyst/gate.json)."
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", type=Path, required=True, help="a new file for the held-out key")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.key.exists():
        parser.error(f"{args.key} exists: a held-out sample is fixed once")
    args.key.parent.mkdir(parents=True, exist_ok=True)
    source = LocalSource(ANALYST_FAMILIES)
    fingerprint = source.export_key(str(args.key.resolve()))
    tasks = []
    try:
        for i in range(RECIPE.held_out_tasks):
            task = source.next_task()
            tasks.append(
                {
                    "family": task.family.value,
                    "task_digest": hashlib.sha256(task.files["data.csv"]).hexdigest(),
                }
            )
            if (i + 1) % 30 == 0:
                print(
                    f"  {i + 1}/{RECIPE.held_out_tasks} held-out tasks", file=sys.stderr, flush=True
                )
    finally:
        source.close()
    probes = (
        Path(__file__).resolve().parent.parent / "docs/demo/analyst/probe_prompts.json"
    ).read_bytes()
    report = {
        "registered_before_training": True,
        "recipe": RECIPE.as_json(),
        "held_out": {
            "key_fingerprint": fingerprint,
            "tasks": tasks,
            "decoding": "greedy, llama.cpp, each checkpoint merged and exported to GGUF Q8_0",
            "pairing": "each task is one group of handles, one per arm, so every arm answers it",
        },
        "probe_prompts_sha256": hashlib.sha256(probes).hexdigest(),
        "rules": RULES,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}: {len(tasks)} held-out tasks under key {fingerprint}")


if __name__ == "__main__":
    main()
