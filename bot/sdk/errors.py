"""What the SDK raises besides `bot.errors`, still under the one root.

    HitlError                      (bot.errors)
    ├── Rejected                   the call will not run: a person said no (reason_code, text)
    │   ├── TimedOut               nobody decided in time: auto_rejected, the deadline
    │   │                          passed with no sweeper, or the caller's own timeout
    │   ├── Steered                a person's correction came first: `text` is what they
    │   │                          said, `actor` who; str() is what the model should read
    │   └── Cancelled              withdrawn: an operator cancelled it
    │       └── RunStopped         a person stopped the run: no call of it runs any more
    ├── Unanswered                 a question got no answer (expired or cancelled)
    ├── ApiError                   the HTTP API answered with an error the SDK has no class for
    └── StoreUnavailable           (bot.errors)
        └── ApiUnavailable         the HTTP API cannot be reached

Why here and not in `bot/errors.py`: these are outcomes a caller of the gate
handles (a rejection is the gate working, not the bot failing), they exist only
for SDK users, and `bot.errors` is the bot's own tree, exported whole from
`bot` and checked by `tests/test_public_api.py`. Subclassing `HitlError` keeps
`except HitlError` catching everything either package raises. Over HTTP the
API's error codes are turned back into the `bot.errors` classes, so both modes
raise the same exceptions.
"""

from __future__ import annotations

from bot.core.models import ActionRequest, Question
from bot.errors import HitlError, StoreUnavailable


class Rejected(HitlError):
    """The gated call was not approved and did not run."""

    def __init__(
        self,
        message: str,
        *,
        request: ActionRequest | None = None,
        reason_code: str | None = None,
        text: str | None = None,
        actor: str | None = None,
    ) -> None:
        super().__init__(message)
        self.request = request
        self.reason_code = reason_code
        self.text = text
        self.actor = actor


class TimedOut(Rejected):
    """Nobody decided in time; the safe default (not running) applied."""


class Cancelled(Rejected):
    """The request was withdrawn before it ran (a stopped run, an operator)."""


class Steered(Rejected):
    """A person's correction came before the call (queued before it, or while it waited,
    which withdrew it): the call did not run. Hand `str(exc)` to the model as the tool's
    result, as the worker does; `text` and `actor` are the person's words and id."""


class RunStopped(Cancelled):
    """A person stopped the run: this call did not run, and none of the run's will."""


def steered(
    says: str,
    *,
    stopped: bool,
    text: str | None,
    actor: str | None,
    request: ActionRequest | None = None,
) -> Rejected:
    """What a call a person spoke before raises, in both modes: `says` is the sentence the
    model reads (bot.messages CALL_*)."""
    cls = RunStopped if stopped else Steered
    code = "run_stopped" if stopped else "steered"
    return cls(says, request=request, reason_code=code, text=text, actor=actor)


class Unanswered(HitlError):
    """A question expired or was cancelled without an answer."""

    def __init__(self, message: str, *, question: Question | None = None) -> None:
        super().__init__(message)
        self.question = question


class ApiError(HitlError):
    """An error response the SDK does not map to a more specific class."""

    def __init__(self, message: str, *, status: int, error: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error


class ApiUnavailable(StoreUnavailable):
    """The HTTP API did not answer (connection refused, timeout, DNS)."""
