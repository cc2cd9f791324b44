"""The GRPO demo's held-out evaluations as inspect_ai logs (`inspect view` reads them):
one sample per task, the brief as its input, the model's reply as its output, the
clipped reward as its score."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from smollm2_demo import Evaluation


def write_log(evaluation: Evaluation, path: Path, report: dict[str, Any]) -> None:
    from importlib.metadata import version

    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalPlan,
        EvalResults,
        EvalSample,
        EvalScore,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    created = datetime.now(UTC).isoformat()
    model = f"llama-cpp/{evaluation.label}"
    ids = [f"task-{i:03d}-{d[:12]}" for i, d in enumerate(evaluation.digests)]
    samples = [
        EvalSample(
            id=ids[i],
            epoch=1,
            input=evaluation.prompts[i],
            target="",
            output=ModelOutput.from_content(model, evaluation.completions[i]),
            scores={
                "clipped_reward": Score(
                    value=evaluation.rewards[i],
                    explanation="valid submission"
                    if evaluation.valid[i]
                    else "no valid submission: reward -1",
                )
            },
            metadata={
                "family": evaluation.families[i],
                "valid": evaluation.valid[i],
                "task_digest": evaluation.digests[i],
            },
        )
        for i in range(len(ids))
    ]
    s = evaluation.summary()
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=created,
            task="causal-gym/grpo-demo-held-out",
            dataset=EvalDataset(name="held-out fresh-key sample", samples=len(ids), sample_ids=ids),
            model=model,
            config=EvalConfig(epochs=1),
            packages={"causal-gym": version("causal-gym")},
            metadata={"recipe": report["recipe"], "temperature": 0.0},
        ),
        plan=EvalPlan(name="greedy, first reply"),
        results=EvalResults(
            total_samples=len(ids),
            completed_samples=len(ids),
            scores=[
                EvalScore(
                    name="clipped_reward",
                    scorer="causal-gym",
                    metrics={
                        k: EvalMetric(name=k, value=s[k])
                        for k in ("mean_clipped_reward", "mean_clipped_reward_se", "valid_share")
                    },
                )
            ],
        ),
        samples=samples,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial.eval")
    write_eval_log(log, str(partial))
    os.replace(partial, path)
