"""Deciding by thread reply: "approve" or "reject: why" in a card's thread counts like a click.

Same path as the buttons (`Approvals.decide`): the same eligibility, self-approval,
quorum, deadline and first-wins rules, the same audit entry (with `via:
thread_reply:CHANNEL:TS`) and the same card update. Two things are particular:

- Which request: the pending one among the cards in that thread (the card's own
  thread, or the run's thread its card was posted in). With several pending the bot
  asks for the buttons; with none the reply is an answer or a correction as before.
- What was seen: a decision is bound to the call as it stood when the reply was
  posted. If someone edited the call after that, the reply is refused as stale; a reply
  posted before the card itself (Slack may deliver a retry minutes late) never decides.
- Who: a member of another workspace (Slack Connect) counts only where named by id.

While the run waits on its question, the thread's replies are answers (bot.slack.listeners.threads
asks this module nothing then), so a "yes" meant for the question decides no card.
"""

from __future__ import annotations

import logging

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.ids import is_question_id
from bot.core.models import ActionRequest, Decision
from bot.core.replies import read_reply
from bot.core.states import State
from bot.errors import HitlError
from bot.gate.runtime import Runtime
from bot.slack import messages as smsg
from bot.slack.listeners.approvals import Approvals, refusal_text, tell
from bot.store.codec import from_hash

log = logging.getLogger(__name__)


def ts_order(ts: str) -> tuple[int, int]:
    """A Slack ts ("1700000000.000200") as exact numbers: a float can tie two of them."""
    whole, _, frac = ts.partition(".")
    try:
        return int(whole), int((frac + "000000")[:6])
    except ValueError:
        return (0, 0)


def before_card(reply_ts: str, card_ts: str | None) -> bool:
    """Was the reply posted before the card (or is the card not posted yet)?"""
    return not card_ts or ts_order(reply_ts) <= ts_order(card_ts)


def seen_hash(req: ActionRequest, reply_ms: int) -> str:
    """The payload hash the card showed when the reply was posted."""
    edited_at = req.approvals[0].at if req.original_hash and req.approvals else None
    if edited_at is not None and edited_at > reply_ms and req.original_hash:
        return req.original_hash  # edited after the reply: it decided on the old call
    return req.payload_hash


class ReplyDecisions:
    def __init__(self, rt: Runtime, approvals: Approvals) -> None:
        self.rt = rt
        self.approvals = approvals

    async def pending_in(
        self, channel: str, thread: str, waiting_on: str | None, run_owner: str | None = None
    ) -> list[str]:
        """The pending requests a reply in this thread may decide. In a run's thread
        (`run_owner` given), only the run's own: a request another identity filed under
        the run is decided on its card, never by what the run's people say to the run."""
        ids = await self.rt.threads.cards(channel, thread)
        if waiting_on and not is_question_id(waiting_on):
            ids.add(waiting_on)
        pending = []
        for rid in sorted(ids):
            try:
                req = await self.rt.requests.get(rid)
            except HitlError:
                continue
            if req.state == State.PENDING_REVIEW and run_owner in (None, req.owner):
                pending.append(rid)
        return pending

    async def handle(
        self,
        client: AsyncWebClient,
        event: dict[str, object],
        *,
        bot_user: str | None,
        waiting_on: str | None,
        foreign: bool = False,
        run_owner: str | None = None,
    ) -> bool:
        """Apply the reply as a decision if it states one; True when it was taken as one
        (decided, refused, or answered with a request to use the buttons)."""
        words = self.rt.policy.reply_words
        verdict = read_reply(str(event.get("text") or ""), words, bot_user=bot_user)
        if verdict is None:
            return False
        channel, thread = str(event["channel"]), str(event["thread_ts"])
        user, ts = str(event.get("user") or ""), str(event["ts"])
        pending = await self.pending_in(channel, thread, waiting_on, run_owner)
        if not pending:
            return False  # nothing to decide here: the reply is an answer or a correction
        if len(pending) > 1:
            await client.chat_postMessage(
                channel=channel, thread_ts=thread, text=smsg.REPLY_AMBIGUOUS.format(n=len(pending))
            )
            return True
        fields = await self.rt.requests.fields(pending[0])
        if before_card(ts, fields.get("msg_ts")):
            log.info(
                "a reply older than its card decides nothing",
                extra={"request_id": pending[0], "actor": user, "reply_ts": ts},
            )
            text = smsg.REPLY_BEFORE_CARD.format(id=pending[0])
            await tell(client, channel=channel, user=user, thread_ts=thread, text=text)
            return True
        req = from_hash(fields)
        decision = Decision(
            event=verdict.event,
            payload_hash=seen_hash(req, int(float(ts) * 1000)),
            reason_code=verdict.reason_code,
            text=verdict.text,
            via=f"thread_reply:{channel}:{ts}",
        )
        try:
            await self.approvals.decide(client, user, req.id, decision, foreign=foreign)
        except HitlError as exc:
            await tell(client, channel=channel, user=user, thread_ts=thread, text=refusal_text(exc))
        return True
