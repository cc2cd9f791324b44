"""Does a ranking made on the synthetic tiers hold on real covariates?

The scripted ladder (difference in means, adjusting for post-treatment columns too,
the reference with a narrow interval, the reference, the flexible reference on every
task, the generator-aware posterior) answers the same number of train tasks of each
family with a real tier twice: tasks of the synthetic tiers (easy, medium, hard and
the expert fifth, as streams serve them) and tasks of the real tier. Each rung's mean
reward with its standard error, the two orders, and Kendall's tau between them go to
docs/real/ranking.json; docs/pages/real.md draws its table (scripts/docs_tables.py)
and the plot beside the JSON.

    .venv/bin/python scripts/ranking_transfer.py [--per-family 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from causal_gym import generate_task, resolve_key  # noqa: E402
from causal_gym.generate.draw import plan_task  # noqa: E402
from causal_gym.plan.tiers import Tier  # noqa: E402
from causal_gym.reference import answer, probes  # noqa: E402
from causal_gym.reference.flexible import fit_flexible  # noqa: E402
from causal_gym.scoring.answer import episode_score  # noqa: E402
from causal_gym.task_id import REAL_FAMILIES, TaskId  # noqa: E402

OUT = REPO / "docs" / "real" / "ranking.json"
#: The ladder, in the order the issue names it, with the labels the docs print.
LADDER = {
    "diff_in_means": "difference in means",
    "post_treatment": "adjusts for post-treatment columns",
    "narrow": "reference with a narrow interval",
    "reference": "the reference (OLS, or flexible where the README says nonlinear)",
    "flexible": "the flexible reference (cross-fitted AIPW) on every task",
    "bayes_prior": "generator-aware posterior (bayes-prior probe)",
}
GROUPS = ("synthetic", "real")


def flexible(staged: probes.Staged) -> dict[str, object]:
    """The kit's answer built on flexible.py's fit, whatever the README says."""
    return answer.reference_submission(fit_flexible(staged.frame, staged.dictionary),
                                       staged.dictionary)  # fmt: skip


POLICIES = {
    "diff_in_means": probes.diff_in_means,
    "post_treatment": probes.post_treatment,
    "narrow": probes.narrow,
    "reference": probes.honest,
    "flexible": flexible,
    "bayes_prior": probes.bayes_prior,
}


def task_ids(family: str, group: str, count: int) -> list[str]:
    key = resolve_key(environ={})
    found: list[str] = []
    index = 0
    while len(found) < count:
        task_id = f"train:{family}:{index}"
        if (plan_task(key, TaskId.parse(task_id)).tier is Tier.REAL) == (group == "real"):
            found.append(task_id)
        index += 1
    return found


def rewards(job: tuple[str, str]) -> tuple[str, str, dict[str, float]]:
    group, task_id = job
    task = generate_task(task_id, resolve_key(environ={}))
    staged = probes.Staged.parse(
        task.public.files["data.csv"], task.public.files["README.md"].decode("utf-8")
    )
    return group, task_id, {
        rung: episode_score(task, policy(staged)).reward for rung, policy in POLICIES.items()
    }  # fmt: skip


def kendall_tau(first: list[str], second: list[str]) -> float:
    """Kendall's tau-a between two orders of the same items (no ties)."""
    pos = {item: i for i, item in enumerate(second)}
    pairs = [(a, b) for i, a in enumerate(first) for b in first[i + 1 :]]
    agree = sum(1 if pos[a] < pos[b] else -1 for a, b in pairs)
    return agree / len(pairs)


def summarize(rows: list[tuple[str, str, dict[str, float]]]) -> dict[str, object]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    for group in GROUPS:
        table[group] = {}
        for rung in LADDER:
            values = [r[rung] for g, _, r in rows if g == group]
            mean = sum(values) / len(values)
            var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
            table[group][rung] = {"mean": mean, "se": math.sqrt(var / len(values)),
                                  "n": len(values)}  # fmt: skip
    orders = {g: sorted(LADDER, key=lambda r: -table[g][r]["mean"]) for g in GROUPS}
    return {
        "per_family": len(rows) // (len(GROUPS) * len(REAL_FAMILIES)),
        "families": list(REAL_FAMILIES),
        "labels": LADDER,
        "rewards": table,
        "orders": orders,
        "kendall_tau": kendall_tau(orders["synthetic"], orders["real"]),
    }


def plot(result: dict[str, object], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rewards = result["rewards"]
    assert isinstance(rewards, dict)
    fig, ax = plt.subplots(figsize=(10, 4.4))
    rungs = list(LADDER)
    for offset, group in ((-0.18, "synthetic"), (0.18, "real")):
        means = [max(rewards[group][r]["mean"], -3.0) for r in rungs]
        ses = [1.96 * rewards[group][r]["se"] for r in rungs]
        ax.barh([i + offset for i in range(len(rungs))], means, 0.34, xerr=ses,
                label=f"{group} tiers" if group == "synthetic" else "real tier")  # fmt: skip
    ax.set_yticks(range(len(rungs)), [LADDER[r] for r in rungs], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("mean reward (95% interval; floored at -3 for display)")
    ax.set_title(f"Scripted ladder, synthetic vs real covariates "
                 f"(Kendall's tau {result['kendall_tau']:+.2f})", fontsize=10)  # fmt: skip
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    jobs = [(g, tid) for g in GROUPS for f in REAL_FAMILIES
            for tid in task_ids(f, g, args.per_family)]  # fmt: skip
    rows = []
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        for done, row in enumerate(pool.imap(rewards, jobs, chunksize=4), start=1):
            rows.append(row)
            if done % 50 == 0 or done == len(jobs):
                print(f"{done}/{len(jobs)} tasks", flush=True)
    result = summarize(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    plot(result, args.out.with_suffix(".png"))
    for group in GROUPS:
        print(group, " > ".join(result["orders"][group]))  # type: ignore[index]
    print(f"Kendall's tau {result['kendall_tau']:+.3f}; wrote {args.out}")


if __name__ == "__main__":
    main()
