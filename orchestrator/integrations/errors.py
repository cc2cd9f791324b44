"""The integrations' error (defined with the orchestrator's others in
orchestrator/errors.py)."""

from __future__ import annotations

from orchestrator.errors import IntegrationError

__all__ = ["IntegrationError"]
