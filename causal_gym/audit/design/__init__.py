"""The design suite: eval-v3's families (iv, did, rdd), audited through the one
protocol (causal_gym/audit/suite.py); its report is causal_gym/audit/reports/design.json."""
