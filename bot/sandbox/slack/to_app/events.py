"""The Events API side: people post, mention the bot, open its home tab.

Each becomes an `event_callback` delivered (and retried) like Slack's. A post that
mentions `<@BOT>` outside a DM sends both a `message` and an `app_mention` event.
The bot's own posts are echoed as `message` events only with `echo_bot_messages`.
Nothing is delivered from a channel the bot is not a member of (membership.py).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from bot.sandbox.slack.acting import person, place
from bot.sandbox.slack.api.membership import hears
from bot.sandbox.slack.errors import ControlError
from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.to_app.delivery import Answer, Deliverer
from bot.sandbox.slack.to_app.payloads import Payloads
from bot.sandbox.slack.workspace import JSON, Message, Workspace


@dataclass
class Posted:
    channel: str
    ts: str
    thread_ts: str | None
    event_ids: list[str] = field(default_factory=list)
    statuses: list[int | None] = field(default_factory=list)  # filled when waited for

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Events:
    def __init__(
        self,
        ws: Workspace,
        ids: Ids,
        payloads: Payloads,
        deliverer: Deliverer,
        echo_bot_messages: bool = False,
    ) -> None:
        self.ws = ws
        self.ids = ids
        self.payloads = payloads
        self.deliverer = deliverer
        self.echo_bot_messages = echo_bot_messages

    def _mentions_bot(self, text: str) -> bool:
        return re.search(rf"<@{re.escape(self.ws.bot.id)}(\|[^>]*)?>", text) is not None

    async def _deliver(self, events: list[JSON], wait: bool) -> tuple[list[str], list[Answer]]:
        envelopes = [self.payloads.envelope(e) for e in events]
        tasks = [self.deliverer.send_event_later(env) for env in envelopes]
        answers = list(await asyncio.gather(*tasks)) if wait else []
        return [str(env["event_id"]) for env in envelopes], answers

    async def post(
        self,
        user_ref: str,
        channel_ref: str,
        text: str,
        thread_ts: str | None = None,
        wait: bool = True,
        *,
        broadcast: bool = False,
        file_name: str | None = None,
    ) -> Posted:
        """A person posts `text` (Slack wire format: `&amp;`-escaped, `<@U...>` mentions).

        `broadcast`: a thread reply also sent to the channel, which Slack delivers with
        subtype `thread_broadcast` and the thread's first message as `root`.
        `file_name`: a file shared with the text as its comment (subtype `file_share`)."""
        user = person(self.ws, user_ref)
        channel = place(self.ws, user, channel_ref)
        root = None
        if thread_ts:
            parent = channel.messages.get(thread_ts)
            if parent is None:
                raise ControlError(f"no message {thread_ts} in {channel_ref}", 404)
            root = channel.messages.get(parent.thread_ts or "") if parent.is_reply() else parent
            thread_ts = parent.thread_ts if parent.is_reply() else parent.ts
        if broadcast and root is None:
            raise ControlError("only a thread reply can also be sent to the channel", 400)
        subtype = "thread_broadcast" if broadcast else "file_share" if file_name else None
        message = Message(
            channel=channel.id,
            ts=self.ids.ts(),
            text=text,
            user=user.id,
            thread_ts=thread_ts or None,
            client_msg_id=str(uuid.uuid4()),
            subtype=subtype,
            files=[_file(self.ids.ts(), file_name)] if file_name else None,
        )
        self.ws.add_message(message)
        events = [self.payloads.message_event(message, channel)]
        if broadcast and root is not None:
            events[0]["root"] = self.ws.message_json(root)
        if channel.kind != "im" and self._mentions_bot(text):
            events.append(self.payloads.app_mention_event(message, channel))
        if not hears(self.ws, channel):
            events = []  # Slack sends a bot events only from conversations it is in
        event_ids, answers = await self._deliver(events, wait)
        return Posted(
            channel.id, message.ts, message.thread_ts, event_ids, [a.status for a in answers]
        )

    async def open_home(self, user_ref: str, wait: bool = True) -> Posted:
        """A person opens the bot's Home tab: `app_home_opened`."""
        user = person(self.ws, user_ref)
        channel = self.ws.open_dm([user.id])
        event = self.payloads.app_home_opened_event(user, channel, self.ws.home_view(user.id))
        event_ids, answers = await self._deliver([event], wait)
        return Posted(
            channel.id, str(event["event_ts"]), None, event_ids, [a.status for a in answers]
        )

    def bot_message(self, message: Message, edited: bool) -> None:
        """Hook for chat.postMessage / chat.update: echo to the bot when asked to."""
        if not self.echo_bot_messages:
            return
        channel = self.ws.channels[message.channel]
        if edited:
            event = self.payloads.message_changed_event(message, channel)
        else:
            event = self.payloads.message_event(message, channel)
        self.deliverer.send_event_later(self.payloads.envelope(event))


def _file(ts: str, name: str) -> JSON:
    """A shared file as a message event lists it (the fields a bot may read)."""
    file_id = "F" + ts.replace(".", "")[-10:]
    return {"id": file_id, "name": name, "title": name, "mode": "hosted", "filetype": "text"}
