"""The `seed` audit suite: its rows (rows.py), its report and checks (report.py),
its plots (plots.py) and the suite itself (suite.py, registered by name in
causal_gym/audit/suite.py)."""
