"""What knowing the generator is worth on the frozen splits (generator 2).

A frozen split's bytes never move, so eval-v1 and eval-v2 keep generator 2's effect
sizes (|ATE| uniform on [0.10, 1.50]), its obs_vs_rct biases (at least 4 combined
SEs) and whatever an agent can gain from knowing them. This scores the honest
reference and the `bayes-prior` probe on every task of each split under the current
reward version and prints their paired difference per family, with its SE. The
audits measure the same on train tasks (generator 3), what agents learn from.

    .venv/bin/python scripts/frozen_bayes_gain.py > docs/audits/frozen_bayes_gain.md
"""

from __future__ import annotations

import math
import statistics
from concurrent.futures import ProcessPoolExecutor

from causal_gym.splits.manifest import split_ids
from causal_gym.versions import reward_version

SPLITS = ("eval-v1", "eval-v2")


def gain(task_id: str) -> tuple[str, float]:
    """The bayes-prior probe's reward minus the honest reference's on one task."""
    from causal_gym.audit.policies import staged_view
    from causal_gym.audit.rows import scored_answer
    from causal_gym.contracts.families import contract_of
    from causal_gym.make import generate_task
    from causal_gym.reference import estimand_probes, probes
    from causal_gym.reference.estimands import Analysis
    from causal_gym.rng_keys.keys import resolve_key

    task = generate_task(task_id, resolve_key(environ={}))
    if contract_of(task.public.family).multi_estimand:
        analysis = Analysis.parse(dict(task.public.files))
        bayes, honest = estimand_probes.bayes_prior(analysis), estimand_probes.honest(analysis)
    else:
        view = staged_view(task.public)
        bayes, honest = probes.bayes_prior(view), probes.honest(view)
    difference = scored_answer(task, bayes).reward - scored_answer(task, honest).reward
    return task.public.family.value, difference


def main() -> None:
    version = reward_version("eval-v1")
    print(f"Reward version {version}; every task of each frozen split (generator 2).\n")
    print("| split | family | tasks | bayes-prior minus honest | SE |")
    print("| --- | --- | ---: | ---: | ---: |")
    with ProcessPoolExecutor() as pool:
        for split in SPLITS:
            gains: dict[str, list[float]] = {}
            for family, value in pool.map(gain, split_ids(split), chunksize=8):
                gains.setdefault(family, []).append(value)
            for family, values in gains.items():
                se = statistics.stdev(values) / math.sqrt(len(values))
                mean = statistics.mean(values)
                print(f"| {split} | {family} | {len(values)} | {mean:+.4f} | {se:.4f} |")


if __name__ == "__main__":
    main()
