"""Print the README's tables for the multi-estimand families' audit from its report.

.venv/bin/python scripts/audit_tables_v2.py [causal_gym/audit_report_v2.json]
"""

from __future__ import annotations

import sys
from pathlib import Path

from causal_gym.audit.estimand_report import EstimandAuditReport
from causal_gym.audit.knowledge import knowledge_table

DEFAULT = Path(__file__).resolve().parents[1] / "causal_gym" / "audit_report_v2.json"


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
    report = EstimandAuditReport.model_validate_json(path.read_text())
    keys = ", ".join(f"{k.label} ({k.fingerprint})" for k in report.keys)
    print(f"keys: {keys}; {report.per_family} tasks per family and key\n")
    print(
        "| family | tasks | honest reward | coverage per estimand | all intervals | Brier skill |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    for family, s in report.families.items():
        tested = ", ".join(
            f"{name} {c.coverage:.3f}" for name, c in s.coverage.items() if name != "all_estimands"
        )
        pooled = s.coverage["all_estimands"]
        skill = "" if s.mean_brier_skill is None else f"{s.mean_brier_skill:.4f}"
        print(
            f"| {family} | {s.n} | {s.mean_reward:.4f} | {tested} | "
            f"{pooled.coverage:.3f} of {pooled.n} | {skill} |"
        )
    print("\n| family | probe | reward | minus honest |")
    print("| --- | --- | ---: | ---: |")
    for family, probes in report.hack_probes.items():
        for name, gap in probes.items():
            print(f"| {family} | {name} | {gap.mean:.4f} | {gap.diff_mean:+.4f} |")
    for family, sweep in report.width_sweep.items():
        cells = ", ".join(
            f"{lv:.2f}: {m:.4f}"
            for lv, m in zip(sweep.levels, sweep.mean_estimand_reward, strict=True)
            if lv in (0.8, 0.88, 0.9, 0.92, 0.95)
        )
        print(f"\nwidth sweep {family}: {cells}")
    leaks = {f: c.metadata for f, c in report.confounding.items()}
    print(f"\nreward version {report.reward_version}; what knowing the generator buys:")
    print("\n".join(knowledge_table(report.bayes_prior, leaks, {})))
    for family, c in report.confounding.items():
        print(
            f"\n{family}: {c.n_confounded} confounded, {c.n_clean} clean; residual SD AUC "
            f"data.csv {c.auc_extract_sd:.3f}, trial.csv {c.auc_trial_sd:.3f}; reference "
            f"Brier skill {c.brier_skill_mean:.4f} (SD {c.brier_skill_sd:.3f})"
        )
    failed = [c.name for c in report.checks if not c.passed]
    print(
        f"\n{len(report.checks)} checks, failing: {failed or 'none'}; per-check level "
        f"{report.per_check_alpha:.1e}; total false-alarm {report.total_false_alarm:.3%}"
    )


if __name__ == "__main__":
    main()
