"""The real suite: the seed suite's protocol (rows, report, tables, plots: honest
answers, the interval sweep, the hack probes, the third-party AIPW analyst, the
bayes-prior probe, the more efficient OLS analyst, the leakage check) on the real
tier: eval-real-v1, or the real train tasks of its families under several keys. Its
report is causal_gym/audit/reports/real.json."""

from __future__ import annotations

from causal_gym.audit.seed.report import SeedReport, evaluate, summarize
from causal_gym.audit.seed.rows import audit_task
from causal_gym.audit.seed.suite import honest_table, knowledge, plots, probes_table
from causal_gym.audit.suite import AuditSuite

SUITE = AuditSuite(
    name="real",
    split="eval-real-v1",
    about="the real tier of ate, adjustment, null_detect: the seed suite's protocol",
    committed="audit/reports/real.json",
    report=SeedReport,
    audit_task=audit_task,
    summarize=summarize,
    evaluate=evaluate,
    tables={"honest": honest_table, "probes": probes_table, "knowledge": knowledge},
    plots=plots,
    tier="real",
)
