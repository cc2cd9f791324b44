"""The anti-hack audit: honest reference versus every cheap way to game the reward.

One protocol (suite.py) and one runner (runner.py); each suite is a folder (`seed/`,
`estimand/`, `expert/`: its rows, its report and checks, its plots, and the suite
itself), and what they share sits here once: the row base and scoring (rows.py), the
report base and its seal (report.py), the checks and statistics (checks.py, stats.py,
knowledge.py), the per-family numbers (summary.py), the policies (policies.py), the
plots and tables (plots.py, tables.py). The committed reports and their plots are in
`reports/`.
"""
