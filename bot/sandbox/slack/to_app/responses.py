"""Replies through `response_url` and in the immediate HTTP answer to an interaction.

A response_url (served at `/_emu/response/<token>`) accepts `{text, blocks,
response_type, replace_original, delete_original, thread_ts}`: it replaces or deletes
the message the interaction came from (ephemeral or not), posts `in_channel`, or by
default shows an ephemeral to the user who acted. Slack keeps it valid for 30 minutes
and 5 uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.sandbox.slack.blockkit import validate_blocks, with_generated_ids
from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.workspace import JSON, SLACKBOT, Ephemeral, Message, Workspace

RESPONSE_URL_TTL_SECONDS = 30 * 60
RESPONSE_URL_USES = 5


@dataclass
class Origin:
    """Where an interaction happened, so a reply can land there."""

    channel: str
    user: str
    message_ts: str | None = None
    is_ephemeral: bool = False
    thread_ts: str | None = None


@dataclass
class _Issued:
    origin: Origin
    issued_at: float
    uses: int = 0


class Responses:
    def __init__(self, ws: Workspace, ids: Ids) -> None:
        self.ws = ws
        self.ids = ids
        self.base_url = ""
        self._issued: dict[str, _Issued] = {}

    def clear(self) -> None:
        self._issued.clear()

    def issue(self, origin: Origin) -> str:
        token = self.ids.token()
        self._issued[token] = _Issued(origin, self.ids.clock())
        return f"{self.base_url}/_emu/response/{token}"

    def use(self, token: str, body: Any) -> tuple[int, JSON]:
        """Serve a POST to a response_url: (HTTP status, JSON answer)."""
        issued = self._issued.get(token)
        if issued is None or self.ids.clock() - issued.issued_at > RESPONSE_URL_TTL_SECONDS:
            return 404, {"ok": False, "error": "expired_url"}
        if issued.uses >= RESPONSE_URL_USES:
            return 404, {"ok": False, "error": "used_url"}
        if not isinstance(body, dict):
            return 400, {"ok": False, "error": "invalid_payload"}
        blocks = body.get("blocks")
        if blocks is not None and validate_blocks(blocks):
            return 400, {"ok": False, "error": "invalid_blocks"}
        issued.uses += 1
        self.apply(issued.origin, body)
        return 200, {"ok": True}

    def apply(self, origin: Origin, body: JSON) -> None:
        """Do what a response body asks, relative to the interaction's origin."""
        if body.get("delete_original") and self._delete_original(origin):
            return
        text = str(body.get("text") or "")
        blocks = body.get("blocks")
        blocks = with_generated_ids(blocks, self.ids) if isinstance(blocks, list) else None
        if body.get("replace_original") and self._replace_original(origin, text, blocks):
            return
        thread_ts = body.get("thread_ts") or origin.thread_ts
        if body.get("response_type") == "in_channel":
            self.ws.add_message(
                Message(
                    channel=origin.channel,
                    ts=self.ids.ts(),
                    text=text,
                    user=self.ws.bot.id,
                    bot_id=self.ws.bot_id,
                    app_id=self.ws.app_id,
                    blocks=blocks,
                    thread_ts=str(thread_ts) if thread_ts else None,
                )
            )
        else:
            self.ephemeral(origin, text, blocks, thread_ts=str(thread_ts) if thread_ts else None)

    def ephemeral(
        self,
        origin: Origin,
        text: str,
        blocks: list[JSON] | None = None,
        *,
        from_slackbot: bool = False,
        thread_ts: str | None = None,
    ) -> Ephemeral:
        return self.ws.add_ephemeral(
            Ephemeral(
                channel=origin.channel,
                user=origin.user,
                ts=self.ids.ts(),
                text=text,
                blocks=blocks,
                thread_ts=thread_ts,
                bot_id=None if from_slackbot else self.ws.bot_id,
                sender=SLACKBOT if from_slackbot else self.ws.bot.id,
            )
        )

    def _delete_original(self, origin: Origin) -> bool:
        if origin.message_ts is None:
            return False
        if origin.is_ephemeral:
            found = self.ws.find_ephemeral(origin.channel, origin.message_ts)
            if found is not None:
                self.ws.delete_ephemeral(found)
            return found is not None
        return self.ws.delete_message(origin.channel, origin.message_ts)

    def _replace_original(self, origin: Origin, text: str, blocks: list[JSON] | None) -> bool:
        if origin.message_ts is None:
            return False
        target: Message | Ephemeral | None
        if origin.is_ephemeral:
            target = self.ws.find_ephemeral(origin.channel, origin.message_ts)
        else:
            target = self.ws.find_message(origin.channel, origin.message_ts)
        if target is None:
            return False
        target.text = text
        target.blocks = blocks
        self.ws.changed()
        return True

    def immediate(self, origin: Origin, answer: Any, *, allow_in_channel: bool) -> None:
        """The bot's HTTP answer to a slash command or block action, shown as Slack shows it."""
        if isinstance(answer, str) and answer.strip():
            self.ephemeral(origin, answer)
        elif isinstance(answer, dict) and (answer.get("text") or answer.get("blocks")):
            if not allow_in_channel:
                answer = {**answer, "response_type": "ephemeral"}
            self.apply(origin, answer)
