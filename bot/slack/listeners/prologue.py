"""What every listener of the Bolt app goes through, so a new one cannot skip it.

Before any listener (a global middleware):
- the payload's shape was checked already (bot/slack/transport/inbound.py, over HTTP and Socket
  Mode), so a listener reads documented types only;
- a modal's metadata comes back only with serve's seal (bot/slack/listeners/view_seal.py): a
  submission whose seal is missing or wrong is refused here, and a listener reads the
  metadata alone, as it opened the modal with;
- the seal is made current, so whichever listener opens a modal seals it.

After a listener that failed anyway (Bolt's error handler): never the 500 Bolt answers
by default, which Slack shows a person as a generic error, but a refusal the person
reads where they acted (a field error in the modal, an ephemeral beside the card, the
command's own answer), with the traceback in the log for the operator. Nothing was
decided: a decision happens in one store script, which either ran or did not.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks import messages as vmsg
from bot.slack.blocks.modal_errors import fit
from bot.slack.listeners.approvals import tell
from bot.slack.listeners.view_seal import CURRENT, ViewSeal

log = logging.getLogger(__name__)

_VIEWS = frozenset({"view_submission", "view_closed"})


def install(app: AsyncApp, seal: ViewSeal) -> None:
    """Register the prologue and the error handler on `app` (before its listeners)."""

    @app.middleware
    async def prologue(
        body: dict[str, Any], client: AsyncWebClient, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        CURRENT.set(seal)
        if body.get("type") in _VIEWS:
            view = body["view"]
            try:
                view["private_metadata"] = seal.open(view, _user(body))
            except ValueError as exc:
                log.info("modal refused", extra={"actor": _user(body), "reason": str(exc)})
                return await refusal(body, client, smsg.VIEW_SEAL_BAD)
        await next()
        return None

    @app.error
    async def on_error(
        error: Exception,
        body: dict[str, Any],
        client: AsyncWebClient,
        response: BoltResponse | None,
    ) -> BoltResponse | None:
        log.error("a Slack listener failed", exc_info=error, extra={"kind": body.get("type")})
        answer = await refusal(body, client, smsg.PAYLOAD_UNREADABLE)
        # None: the listener had acked already; the person was told in an ephemeral
        return answer if response is not None else None


async def refusal(body: dict[str, Any], client: AsyncWebClient, text: str) -> BoltResponse:
    """Slack's 200 that tells the person `text` where they acted; nothing else happens."""
    kind = body.get("type")
    if kind == "view_submission":
        return BoltResponse(status=200, body=_modal_error(body, text))
    if kind is None and "command" in body:  # a slash command's answer shows as its reply
        return BoltResponse(status=200, body={"response_type": "ephemeral", "text": text})
    channel = _channel(body)
    if kind in ("block_actions", "interactive_message") and channel:
        await tell(client, channel=channel, user=_user(body), text=text)
    return BoltResponse(status=200, body="")


def _modal_error(body: dict[str, Any], text: str) -> dict[str, Any]:
    """Under the modal's first input; a modal with none gets a small one pushed on top."""
    values = ((body.get("view") or {}).get("state") or {}).get("values") or {}
    first = next(iter(values), None)
    if isinstance(first, str) and first:
        return {"response_action": "errors", "errors": {first: fit(text)}}
    view = {
        "type": "modal",
        "title": esc.plain(smsg.REFUSED_TITLE, esc.MODAL_TITLE),
        "close": esc.plain(vmsg.MODAL_CLOSE, esc.MODAL_TITLE),
        "blocks": [esc.section(esc.mrkdwn(text), block_id="hitl_refused")],
    }
    return {"response_action": "push", "view": view}


def _user(body: dict[str, Any]) -> str:
    user = body.get("user")
    found = user.get("id") if isinstance(user, dict) else user or body.get("user_id")
    return str(found or "")


def _channel(body: dict[str, Any]) -> str | None:
    channel = body.get("channel")
    found = channel.get("id") if isinstance(channel, dict) else None
    found = found or (body.get("container") or {}).get("channel_id")
    return str(found) if found else None
