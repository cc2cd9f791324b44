"""Distributed runner for causal-gym on Ray.

Not built yet: the sandboxes, agent episodes and the Ray dispatcher arrive with
their own issues. The package exists so the repository has its final shape.
"""
