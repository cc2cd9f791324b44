"""The run's fixed probe: how likely the policy is to fit the adjusted regression
(adjust_for ["pre_treatment"]), read off its token probabilities on a fixed set of
prompts, for the pre-registered go/no-go.

    python scripts/analyst_probe.py --make docs/demo/analyst/probe_prompts.json

`--make` draws the probe prompts once (8 a family, fresh tasks under a key made for
them and dropped) and writes their token ids as GRPO renders them; the probe is then
the mean over those prompts of P(the fit turn starts `{"adjust_for": ["pre_treatment"]`
up to the list's closing bracket), teacher-forced, so it moves with the policy and not
with sampling noise.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from analyst_demo import COLUMN_OPTIONS, analyst_spec, load_tokenizer, turn_ids
from smollm2_demo import prompt_ids

from orchestrator.integrations.analyst_tools import ANALYST_FAMILIES
from orchestrator.integrations.sources import LocalSource

MARK = '"adjust_for": ["pre_treatment"]'


def adjusted_prefix(tok: Any) -> list[int]:
    """The fit turn's first tokens, through the one that closes ["pre_treatment"]."""
    call = {"name": "fit", "arguments": {"adjust_for": COLUMN_OPTIONS["pre"], "estimator": "ols"}}
    ids = turn_ids(tok, call)
    for end in range(1, len(ids) + 1):
        if MARK in tok.decode(ids[:end]):
            return ids[:end]
    raise SystemExit("analyst_probe: the fit turn does not spell the adjusted call")


def probe_probability(model: Any, tok: Any, prompts: list[dict[str, Any]]) -> float:
    """Mean P(adjusted prefix | prompt) over the probe prompts."""
    import torch

    prefix = adjusted_prefix(tok)
    was_training = model.training
    model.eval()
    total = 0.0
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([prompt["ids"] + prefix])
            logits = model(input_ids=ids, logits_to_keep=len(prefix) + 1).logits[0, :-1]
            logp = torch.log_softmax(logits.float(), dim=-1)
            picked = logp[torch.arange(len(prefix)), torch.tensor(prefix)]
            total += math.exp(float(picked.sum()))
    if was_training:
        model.train()
    return round(total / len(prompts), 5)


def make(path: Path, per_family: int) -> None:
    tok = load_tokenizer()
    spec = analyst_spec(LocalSource(ANALYST_FAMILIES), 1)
    env = spec.environment_factory()
    prompts = []
    try:
        for slot in range(per_family * len(ANALYST_FAMILIES)):
            user = env.reset(task_slot=slot)
            task = env._session.task
            prompts.append(
                {
                    "family": task.family.value,
                    "nonlinear": "- Functional form:" in task.files["README.md"].decode(),
                    "ids": prompt_ids(tok, spec, env, user),
                }
            )
    finally:
        spec.close()
    path.write_text(json.dumps({"mark": MARK, "prompts": prompts}) + "\n")
    print(f"wrote {len(prompts)} probe prompts to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", type=Path, required=True)
    parser.add_argument("--per-family", type=int, default=8)
    args = parser.parse_args()
    make(args.make, args.per_family)


if __name__ == "__main__":
    main()
