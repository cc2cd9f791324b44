"""The NSW reality check of the analysts (causal_gym/reality/nsw.py says what it is).

Stages LaLonde's question as a task (the 185 NSW treated and the 15,992 CPS men),
answers it with the sandbox kit's reference, its naive probes, the flexible reference
and one estimator of the effect on the treated itself (propensity-odds weighting, the
Dehejia-Wahba estimand), and measures each against the NSW experiment: how far it
lands in units of the experiment's own standard error, whether its 90% interval
holds the experimental estimate, and the reward the `ate` formula would pay with the
experimental estimate as truth. Writes docs/real/reality_check.json;
docs/pages/real.md draws its table (scripts/docs_tables.py).

    .venv/bin/python scripts/reality_check.py [--stage DIR]   # DIR: the task's files
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from causal_gym.reality import nsw  # noqa: E402
from causal_gym.reference import answer, probes  # noqa: E402
from causal_gym.reference.flexible import fit_flexible  # noqa: E402
from causal_gym.scoring.reward import PROPER_INTERVAL_ALPHA, estimand_score  # noqa: E402

OUT = REPO / "docs" / "real" / "reality_check.json"
#: Bootstrap replications of the weighting estimator's interval (a fixed stream).
BOOTSTRAP = 200


def att_design(files: dict[str, bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weighting estimator's propensity design (every pre-treatment column, and
    the earnings also as zero indicators and squares, age squared, as Dehejia and
    Wahba specify; standardized), treatment and outcome, on every row as staged:
    nothing is dropped, the file is real end to end."""
    import io

    import pandas as pd

    frame = pd.read_csv(io.BytesIO(files["data.csv"]))
    x = frame[[c[0] for c in nsw.COVARIATES]].to_numpy(np.float64)
    extra = [frame[c].to_numpy(np.float64) for c in ("re74", "re75")]
    x = np.column_stack([x, *(e == 0 for e in extra), *(e**2 / 1e8 for e in extra),
                         frame["age"].to_numpy(np.float64) ** 2 / 100])  # fmt: skip
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    t = frame[nsw.TREATMENT].to_numpy(np.float64)
    return x, t, frame[nsw.OUTCOME].to_numpy(np.float64)


def att_point(x: np.ndarray, t: np.ndarray, y: np.ndarray, rows: np.ndarray) -> float:
    """The effect on the treated on `rows`: the treated's mean minus the controls'
    mean weighted by the propensity odds e / (1 - e) (logistic, unpenalized)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1e6, max_iter=2000).fit(x[rows], t[rows])
    e = np.clip(model.predict_proba(x[rows])[:, 1], 1e-6, 1 - 1e-6)
    treated, odds = t[rows] == 1, e / (1 - e)
    control = ~treated
    weighted = float(np.sum(odds[control] * y[rows][control]) / np.sum(odds[control]))
    return float(y[rows][treated].mean() - weighted)


def att_weighting(files: dict[str, bytes]) -> dict[str, object]:
    """att_point on every row, with a 90% percentile-bootstrap interval from a fixed
    stream."""
    x, t, y = att_design(files)
    everyone = np.arange(len(y))
    stream = nsw._fixed_stream("causal-gym:nsw-reality-check:bootstrap")
    draws = [att_point(x, t, y, stream.choice(everyone, len(everyone))) for _ in range(BOOTSTRAP)]
    low, high = np.quantile(draws, [0.05, 0.95])
    return {"estimate": att_point(x, t, y, everyone), "ci_lower": float(low),
            "ci_upper": float(high)}  # fmt: skip


ANALYSTS = {
    "reference": "the kit's reference (OLS on every pre-treatment column)",
    "diff_in_means": "probe: difference in means",
    "narrow": "probe: the reference with a narrow interval",
    "flexible": "the flexible reference (cross-fitted AIPW of the ATE)",
    "att_weighting": "propensity-odds weighting (the ATT itself; not in the kit)",
}


def answers(files: dict[str, bytes]) -> dict[str, dict[str, object]]:
    staged = probes.Staged.parse(files["data.csv"], files["README.md"].decode("utf-8"))
    flexible = fit_flexible(staged.frame, staged.dictionary)
    return {
        "reference": answer.files_answer(files),
        "diff_in_means": probes.diff_in_means(staged),
        "narrow": probes.narrow(staged),
        "flexible": answer.reference_submission(flexible, staged.dictionary),
        "att_weighting": att_weighting(files),
    }


def measure(files: dict[str, bytes]) -> dict[str, object]:
    experiment = nsw.experiment()
    staged = probes.Staged.parse(files["data.csv"], files["README.md"].decode("utf-8"))
    rows = {}
    for name, given in answers(files).items():
        est, low, high = (float(given[k]) for k in ("estimate", "ci_lower", "ci_upper"))  # type: ignore[arg-type]
        score = estimand_score(experiment.estimate, est, low, high, experiment.width90,
                               staged.scale, PROPER_INTERVAL_ALPHA)  # fmt: skip
        rows[name] = {
            "label": ANALYSTS[name],
            "estimate": est,
            "ci_lower": low,
            "ci_upper": high,
            "distance_in_experiment_se": (est - experiment.estimate) / experiment.se,
            "covers_experiment": low <= experiment.estimate <= high,
            "width_over_experiment": (high - low) / experiment.width90,
            "reward": score.reward,
        }
    return {
        "experiment": {
            "estimate": experiment.estimate,
            "se": experiment.se,
            "n_treated": experiment.n_treated,
            "n_control": experiment.n_control,
        },
        "staged_rows": len(files["data.csv"].splitlines()) - 1,
        "outcome_scale": staged.scale,
        "analysts": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", type=Path, help="also write the task's files here")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    files = nsw.stage()
    if args.stage:
        args.stage.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (args.stage / name).write_bytes(data)
    result = measure(files)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    exp = result["experiment"]
    print(f"experiment: {exp['estimate']:.0f} (SE {exp['se']:.0f})")  # type: ignore[index]
    for name, row in result["analysts"].items():  # type: ignore[attr-defined]
        interval = f"[{row['ci_lower']:9.0f}, {row['ci_upper']:9.0f}]"
        distance = f"{row['distance_in_experiment_se']:+.2f} SE"
        reward = f"reward {row['reward']:+.3f}"
        print(f"{name:14s} {row['estimate']:9.0f} {interval}  {distance}  {reward}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
