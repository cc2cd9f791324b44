"""Hidden structural causal models: model.py (nodes, edges, equations), build.py
(drawing one), sample.py, certify.py (the identification certificate),
identification.py, nonlinear.py and expectations.py (the expert tier's terms)."""
