"""The stream's one error: a request it cannot serve, with the HTTP status it maps to.

Raised for a consumer's or the operator's request (an unknown handle, a pull over a
limit, a wrong token); the stream goes on serving everyone else. The message is one
line naming what is accepted; the client raises it again on its side.
"""

from __future__ import annotations

from orchestrator.errors import OrchestratorError

#: Error codes and their HTTP statuses (the API's error bodies carry the code).
STATUS = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "too_many": 429,
    "unavailable": 503,
}


class StreamError(OrchestratorError, ValueError):
    """Raised for a stream request that cannot be served; `code` is one of STATUS."""

    def __init__(self, message: str, code: str = "bad_request") -> None:
        super().__init__(message)
        self.code = code if code in STATUS else "bad_request"

    @property
    def status(self) -> int:
        return STATUS[self.code]


class WorkerGone(StreamError):
    """Raised inside the service when a supply worker's process is gone (its truths
    with it); to a caller it is an `unavailable` reply."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "unavailable")
