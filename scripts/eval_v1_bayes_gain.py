"""What knowing the generator is worth on the frozen eval-v1 split (generator 2).

eval-v1's bytes do not move, so its tasks keep generator 2's effect sizes (|ATE|
uniform on [0.10, 1.50]) and what an agent can gain by clipping at those bounds. This
scores the honest reference and the `bayes-prior` probe on every eval-v1 task under
reward version 2 and prints their paired difference per family, with its SE.

    .venv/bin/python scripts/eval_v1_bayes_gain.py
"""

from __future__ import annotations

import math
import statistics

from causal_gym.audit.policies import staged_view
from causal_gym.audit.runner import scored_answer
from causal_gym.generate.pipeline import generate_task
from causal_gym.reference.probes import bayes_prior, honest
from causal_gym.rng_keys.keys import resolve_key
from causal_gym.splits.manifest import split_ids


def main() -> None:
    key = resolve_key(environ={})
    gains: dict[str, list[float]] = {}
    for task_id in split_ids("eval-v1"):
        task = generate_task(task_id, key)
        view = staged_view(task.public)
        gap = (
            scored_answer(task, bayes_prior(view)).reward - scored_answer(task, honest(view)).reward
        )
        gains.setdefault(task.public.family.value, []).append(gap)
    print("| family | tasks | bayes-prior minus honest | SE |")
    print("| --- | ---: | ---: | ---: |")
    for family, values in gains.items():
        se = statistics.stdev(values) / math.sqrt(len(values))
        print(f"| {family} | {len(values)} | {statistics.mean(values):+.4f} | {se:.4f} |")


if __name__ == "__main__":
    main()
