"""Hidden structural causal models: model.py (nodes, edges, equations), sample.py,
certify.py (the identification certificate), identification.py, nonlinear.py and
expectations.py (the expert tier's terms). Drawing one for a task is generate/build.py,
which asks the family's hooks."""
