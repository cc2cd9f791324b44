"""The honest reference on the frozen eval-v1 split: coverage and reward per family.

eval-v1 is made with the public default key, so its truths are no secret and its
reference numbers can be published. Coverage comes with its exact (Clopper-Pearson)
95% interval: at 160-170 tasks a family's coverage is only known to about +-0.05.

    .venv/bin/python scripts/eval_v1_reference.py [--workers 2] \
        [--json docs/audits/eval_v1_reference.json]

The JSON (per family and overall: tasks, covered, coverage, its interval, mean reward,
and the reward version) is what the docs' table is generated from.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # worker processes share the cores

from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402

from causal_gym import generate_task, resolve_key  # noqa: E402
from causal_gym.audit.policies import honest, staged_view  # noqa: E402
from causal_gym.audit.stats import clopper_pearson  # noqa: E402
from causal_gym.scoring.answer import score_answer  # noqa: E402
from causal_gym.splits.manifest import split_ids  # noqa: E402
from causal_gym.versions import reward_version  # noqa: E402


def reference_row(task_id: str) -> tuple[str, bool, float]:
    task = generate_task(task_id, resolve_key(environ={}))
    record = score_answer(task, honest(staged_view(task.public)))
    if record is None:
        raise RuntimeError(f"{task_id}: the reference answer did not validate")
    return task.public.family.value, record.covered, record.reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = parser.parse_args()
    ids = split_ids("eval-v1")
    rows = []
    with (
        Progress(console=Console(stderr=True)) as progress,
        multiprocessing.get_context("fork").Pool(args.workers) as pool,
    ):
        job = progress.add_task("eval-v1 reference", total=len(ids))
        for row in pool.imap_unordered(reference_row, ids, chunksize=4):
            rows.append(row)
            progress.advance(job)
    summary: dict[str, object] = {"reward_version": reward_version("eval-v1"), "families": {}}
    print("| family | tasks | reference coverage | exact 95% interval | mean reward |")
    print("| --- | ---: | ---: | --- | ---: |")
    for family in ("ate", "adjustment", "null_detect", "all"):
        members = [r for r in rows if family in ("all", r[0])]
        k, n = sum(r[1] for r in members), len(members)
        low, high = clopper_pearson(k, n, 0.05)
        reward = sum(r[2] for r in members) / n
        print(f"| {family} | {n} | {k / n:.3f} | [{low:.3f}, {high:.3f}] | {reward:.4f} |")
        summary["families"][family] = {  # type: ignore[index]
            "tasks": n, "covered": k, "coverage": k / n, "interval": [low, high],
            "mean_reward": reward,
        }  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
