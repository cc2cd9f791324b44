"""The integrations' one error root."""

from __future__ import annotations

from orchestrator.errors import OrchestratorError


class IntegrationError(OrchestratorError):
    """A trainer adapter was configured or used in a way it does not accept."""
