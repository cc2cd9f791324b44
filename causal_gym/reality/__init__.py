"""Reality checks: questions whose answer an experiment gives, staged as tasks and
served by no stream or split (nsw.py: LaLonde's NSW and CPS comparison)."""
