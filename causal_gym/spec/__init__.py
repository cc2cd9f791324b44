"""Task plans and difficulty tiers."""
