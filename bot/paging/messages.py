"""What a page says: the words a person reads on a phone, and the notes that close it.

Apart from `messages.py` so the paging texts stay in one place beside their sender.
"""

from __future__ import annotations

LINK_TEXT = "The request in Slack"


def summary(call: str, tier: str, who: str, deadline: str | None) -> str:
    by = f"; decide by {deadline}" if deadline else ""
    return f"Approval needed ({tier} risk): {call}; asked by {who}{by}"


def short(tool: str, tier: str) -> str:
    return f"Approval needed ({tier} risk): {tool}"


def outcome_note(state: str, actor: str | None, text: str | None) -> str:
    by = f" by {actor}" if actor else ""
    why = f": {text}" if text else ""
    return f"hitl-bot: the request left review: {state}{by}{why}"


def key_missing(service: str, var: str, rid: str, action: str) -> str:
    return (
        f"{service} {action} of {rid} not sent: the environment variable {var} is not set; "
        f"fix: set {var} to the key for serve and restart it"
    )


def refused(service: str, action: str, rid: str, status: int) -> str:
    return (
        f"{service} refused the {action} of {rid} (HTTP {status}); not retried: check the "
        "key and the level's settings in the policy (hitl-bot policy show)"
    )


def failed(service: str, action: str, rid: str, why: str) -> str:
    return f"{service} {action} of {rid} failed ({why}); the outbox retries it"
