"""The anti-hack audit: honest reference versus every cheap way to game the reward."""

from causal_gym.audit.report import AuditReport, Check
from causal_gym.audit.runner import TaskAudit, audit_task, run_audit

__all__ = ["AuditReport", "Check", "TaskAudit", "audit_task", "run_audit"]
