"""What the bot says when Slack refuses a message it can post once a person fixes
something: the fix for each error code, the ERROR log line, the reason a request shows
(`hitl-bot pending`, `show`, the API) and the note in the requester's run thread.

Apart from `messages.py` so these texts stay in one place beside their sender,
bot/slack/delivery/refusals.py. Typed functions: a wrong placeholder fails mypy.
"""

from __future__ import annotations

TROUBLESHOOTING = "docs/troubleshooting.md"
_TOKEN = "set SLACK_BOT_TOKEN to the app's current Bot User OAuth Token (xoxb-…) and restart serve"


def fix(error: str, *, bot: str, channel: str, needed: str) -> str:
    """What a person does so that Slack takes the message."""
    if error == "not_in_channel":
        return f"/invite @{bot} to {channel}"
    if error == "channel_not_found":
        return (
            f"create {channel}, or /invite @{bot} to it if it is private, "
            "or name another channel in the policy"
        )
    if error == "is_archived":
        return f"unarchive {channel}, or name a live channel in the policy"
    if error == "missing_scope":
        scope = needed or "the scope Slack names"
        return f"add {scope} to the app's bot scopes (manifest.yml) and reinstall the app"
    if error in ("invalid_auth", "not_authed", "token_revoked", "token_expired"):
        return _TOKEN
    if error == "account_inactive":
        return f"reinstall the app (its bot user was deactivated), then {_TOKEN}"
    return f"see {TROUBLESHOOTING} (Slack refuses a message)"


def log_retrying(
    method: str, channel: str, what: str, error: str, fix: str, attempt: int, wait_s: float
) -> str:
    return (
        f"Slack refused {method} in {channel} for {what}: {error}. Fix: {fix}. "
        f"Kept in the outbox and tried again in {wait_s:.0f} s (refusal {attempt})."
    )


def log_given_up(method: str, channel: str, what: str, error: str) -> str:
    return (
        f"slack refused {method} in {channel} for {what} for good: {error} "
        f"(a refusal no retry can fix; {TROUBLESHOOTING} lists them); the notice is dropped"
    )


def log_delivered(what: str, refusals: int) -> str:
    return f"delivered {what} after {refusals} refusal(s) by Slack"


def card_error(channel: str, error: str, fix: str) -> str:
    """Why a request has no card (yet), as `hitl-bot pending`, `show` and the API say it."""
    return f"Slack refused to post in {channel}: {error}. Fix: {fix}. Retried until it posts."


def run_told(tool: str, rid: str, channel: str, error: str, fix: str) -> str:
    """The requester's run thread, told once (`tool`: already escaped for mrkdwn)."""
    return (
        f":warning: The approval card for {tool} ({rid}) could not be posted in {channel}: "
        f"Slack answered `{error}`. Fix: {fix}. The bot keeps trying; the call waits for "
        "its review meanwhile."
    )


def not_member(where: str, channel: str, bot: str, *, posts: bool | None) -> str:
    """`serve`'s start and `hitl-bot policy check`: a review or escalation channel the bot
    is not in. `posts`: whether the token has chat:write.public (None: not known)."""
    unheard = (
        "replies in their threads (approve, reject) never reach the bot: Slack sends a bot "
        "no messages from a channel it has not joined"
    )
    if posts is True:
        why = f"cards post there (the app has chat:write.public), but {unheard}"
    elif posts is False:
        why = f"Slack refuses cards there (not_in_channel), and {unheard}"
    else:
        why = (
            "Slack refuses cards there (not_in_channel) unless the app has "
            f"chat:write.public, and even then {unheard}"
        )
    return (
        f"WARNING {where}: the bot is not a member of {channel}: {why}. "
        f"Fix: /invite @{bot} to {channel}."
    )
