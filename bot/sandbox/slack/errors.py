"""The two ways an emulator call fails.

Exception
 +-- WebApiError    a Web API method answers {"ok": false, "error": ...} (HTTP 200, as Slack does)
 +-- ControlError   a test or the page asked the emulator for something impossible (HTTP 4xx)
"""

from __future__ import annotations

from typing import Any


class WebApiError(Exception):
    """A Slack Web API error code, with any extra fields Slack adds (e.g. `errors`)."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"ok": False, "error": self.error, **self.extra}


class ControlError(Exception):
    """A bad request to the control API: unknown user, no such button, ..."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
