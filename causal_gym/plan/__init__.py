"""Task plans (what an id commits to before its SCM is drawn), difficulty tiers and
effect-size priors."""
