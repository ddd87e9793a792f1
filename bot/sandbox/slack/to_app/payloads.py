"""The bodies Slack sends to an app, built from workspace objects.

Shapes follow Slack's reference for `event_callback` envelopes, `message`, `app_mention`
and `app_home_opened` events, `block_actions`, `view_submission` and `view_closed`
interaction payloads, and slash command forms.
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.slack.ids import Ids
from bot.sandbox.slack.workspace import JSON, Channel, Message, User, View, Workspace

VERIFICATION_TOKEN = "emulator-verification-token"  # deprecated by Slack, still sent


class Payloads:
    def __init__(self, ws: Workspace, ids: Ids) -> None:
        self.ws = ws
        self.ids = ids

    # --- shared pieces -----------------------------------------------------------------

    def user_ref(self, user: User) -> JSON:
        team = user.team_id or self.ws.team_id  # a Slack Connect member's own workspace
        return {"id": user.id, "username": user.name, "name": user.name, "team_id": team}

    def team(self) -> JSON:
        return {"id": self.ws.team_id, "domain": self.ws.team_domain}

    def channel_ref(self, channel: Channel) -> JSON:
        name = channel.name if channel.kind == "channel" else "directmessage"
        return {"id": channel.id, "name": name}

    def view_json(self, view: View) -> JSON:
        return view.to_slack(self.ws.team_id, self.ws.app_id, self.ws.bot_id)

    def _interaction(self, kind: str, user: User) -> JSON:
        return {
            "type": kind,
            "team": self.team(),
            "user": self.user_ref(user),
            "api_app_id": self.ws.app_id,
            "token": VERIFICATION_TOKEN,
            "is_enterprise_install": False,
            "enterprise": None,
        }

    # --- Events API --------------------------------------------------------------------

    def envelope(self, event: JSON) -> JSON:
        now = int(self.ids.clock())
        return {
            "token": VERIFICATION_TOKEN,
            "team_id": self.ws.team_id,
            "api_app_id": self.ws.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": self.ids.event_id(),
            "event_time": now,
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": self.ws.team_id,
                    "user_id": self.ws.bot.id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": f"4-{self.ids.token()}",
        }

    def message_event(self, message: Message, channel: Channel) -> JSON:
        event: JSON = {
            **self.ws.message_json(message),
            "channel": channel.id,
            "event_ts": message.ts,
            "channel_type": channel.kind,
        }
        for key in ("reply_count", "reply_users", "reply_users_count", "latest_reply"):
            event.pop(key, None)
        if not message.is_reply():
            event.pop("thread_ts", None)
        return event

    def message_changed_event(self, message: Message, channel: Channel) -> JSON:
        return {
            "type": "message",
            "subtype": "message_changed",
            "channel": channel.id,
            "channel_type": channel.kind,
            "hidden": True,
            "ts": message.edited["ts"] if message.edited else message.ts,
            "event_ts": message.edited["ts"] if message.edited else message.ts,
            "message": self.ws.message_json(message),
        }

    def app_mention_event(self, message: Message, channel: Channel) -> JSON:
        event: JSON = {
            "type": "app_mention",
            "user": message.user,
            "text": message.text,
            "ts": message.ts,
            "channel": channel.id,
            "event_ts": message.ts,
            "team": self.ws.team_id,
            "client_msg_id": message.client_msg_id,
        }
        if message.is_reply():
            event["thread_ts"] = message.thread_ts
        return event

    def app_home_opened_event(self, user: User, channel: Channel, view: View | None) -> JSON:
        event: JSON = {
            "type": "app_home_opened",
            "user": user.id,
            "channel": channel.id,
            "tab": "home",
            "event_ts": self.ids.ts(),
        }
        if view is not None:
            event["view"] = self.view_json(view)
        return event

    # --- interactivity -----------------------------------------------------------------

    def block_actions(
        self,
        user: User,
        *,
        actions: list[JSON],
        trigger_id: str,
        state: dict[str, Any],
        container: JSON,
        channel: Channel | None = None,
        message: Message | None = None,
        view: View | None = None,
        response_url: str | None = None,
    ) -> JSON:
        payload = self._interaction("block_actions", user)
        payload.update(container=container, trigger_id=trigger_id, state={"values": state})
        if channel is not None:
            payload["channel"] = self.channel_ref(channel)
        if message is not None:
            payload["message"] = self.ws.message_json(message)
        if view is not None:
            payload["view"] = self.view_json(view)
        if response_url is not None:
            payload["response_url"] = response_url
        payload["actions"] = actions
        return payload

    def view_submission(self, user: User, view: View, trigger_id: str) -> JSON:
        payload = self._interaction("view_submission", user)
        payload.update(view=self.view_json(view), trigger_id=trigger_id, response_urls=[])
        return payload

    def view_closed(self, user: User, view: View, is_cleared: bool) -> JSON:
        payload = self._interaction("view_closed", user)
        payload.update(view=self.view_json(view), is_cleared=is_cleared)
        return payload

    def slash_command(
        self,
        user: User,
        channel: Channel,
        command: str,
        text: str,
        trigger_id: str,
        response_url: str,
    ) -> dict[str, str]:
        return {
            "token": VERIFICATION_TOKEN,
            "team_id": self.ws.team_id,
            "team_domain": self.ws.team_domain,
            "channel_id": channel.id,
            "channel_name": self.channel_ref(channel)["name"],
            "user_id": user.id,
            "user_name": user.name,
            "command": command,
            "text": text,
            "api_app_id": self.ws.app_id,
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": trigger_id,
        }
