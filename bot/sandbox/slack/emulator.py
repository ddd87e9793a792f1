"""`SlackEmulator`: a local Slack that a Bolt app cannot tell from the real one.

    emu = SlackEmulator("secret", "xoxb-test", events_url="http://127.0.0.1:3000/slack/events")
    await emu.start()                      # serves emu.app on a free port
    client = AsyncWebClient(token="xoxb-test", base_url=emu.api_url)
    await emu.post("alice", "#hitl-approvals", "hello <@UBOT>")
    await emu.click("alice", "approve", channel="CHITLAPPROVALS", ts=ts)
    await emu.stop()

With `app_token="xapp-..."` the emulator speaks Socket Mode instead: the bot calls
`apps.connections.open` with that token and every delivery goes down its WebSocket.

One object ties the parts together: the workspace (state), the Web API (`/api/...`),
delivery to the bot (signed, retried), the people's side (post / click / submit /
command / home), the control API (`/_emu/...`) and the page (`/`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Route

from bot.sandbox.slack.acting import Outcome
from bot.sandbox.slack.api.api_common import ApiContext
from bot.sandbox.slack.api.faults import CallLog, Delay, Fault, Faults
from bot.sandbox.slack.api.membership import invite_bot, membership_routes, remove_bot
from bot.sandbox.slack.api.ratelimits import RateLimits, channel_id_in
from bot.sandbox.slack.api.webapi import WebApi
from bot.sandbox.slack.control import control_routes
from bot.sandbox.slack.defaults import (
    BOT_SCOPES,
    default_bot,
    default_channels,
    default_usergroups,
    default_users,
)
from bot.sandbox.slack.ids import Clock, Ids
from bot.sandbox.slack.page import page_routes
from bot.sandbox.slack.serving import BackgroundServer
from bot.sandbox.slack.snapshot import snapshot
from bot.sandbox.slack.to_app.commands import Commands
from bot.sandbox.slack.to_app.delivery import (
    ACK_TIMEOUT_SECONDS,
    RETRY_DELAYS_SECONDS,
    Deliverer,
    Delivery,
)
from bot.sandbox.slack.to_app.events import Events, Posted
from bot.sandbox.slack.to_app.interactions import Interactions
from bot.sandbox.slack.to_app.payloads import Payloads
from bot.sandbox.slack.to_app.responses import Responses
from bot.sandbox.slack.to_app.socket_mode import SocketHub
from bot.sandbox.slack.triggers import TRIGGER_TTL_SECONDS, Triggers
from bot.sandbox.slack.workspace import JSON, Channel, Message, User, UserGroup, View, Workspace


class SlackEmulator:
    def __init__(
        self,
        signing_secret: str = "emulator-signing-secret",
        bot_token: str = "xoxb-emulator-token",
        events_url: str | None = None,
        *,
        users: Sequence[User] | None = None,
        channels: Sequence[Channel] | None = None,
        usergroups: Sequence[UserGroup] | None = None,
        bot: User | None = None,
        clock: Clock = time.time,
        ack_timeout: float = ACK_TIMEOUT_SECONDS,
        retry_delays: tuple[float, ...] = RETRY_DELAYS_SECONDS,
        trigger_ttl: float = TRIGGER_TTL_SECONDS,
        echo_bot_messages: bool = False,
        app_token: str | None = None,
        scopes: Sequence[str] = BOT_SCOPES,
    ) -> None:
        self.signing_secret = signing_secret
        self.bot_token = bot_token
        self.ids = Ids(clock)
        self.workspace = Workspace(
            ids=self.ids,
            bot=bot or default_bot(),
            users=list(default_users() if users is None else users),
            channels=list(default_channels() if channels is None else channels),
            usergroups=list(default_usergroups() if usergroups is None else usergroups),
            scopes=scopes,
        )
        self.triggers = Triggers(self.ids, trigger_ttl)
        self.faults = Faults()
        self.calls = CallLog()
        self.socket = SocketHub(app_token, lambda: self.base_url)
        self.deliverer = Deliverer(
            signing_secret,
            events_url,
            clock=clock,
            ack_timeout=ack_timeout,
            retry_delays=retry_delays,
            socket=self.socket,
        )
        self.payloads = Payloads(self.workspace, self.ids)
        self.responses = Responses(self.workspace, self.ids)
        self.events = Events(
            self.workspace, self.ids, self.payloads, self.deliverer, echo_bot_messages
        )
        parts = (self.workspace, self.triggers, self.payloads, self.deliverer, self.responses)
        self.commands = Commands(*parts)
        self.interactions = Interactions(
            self.workspace, self.ids, self.triggers, self.payloads, self.deliverer, self.responses
        )
        self.web_api = WebApi(
            ApiContext(
                self.workspace,
                self.ids,
                self.triggers,
                lambda: self.base_url,
                self.events.bot_message,
            ),
            bot_token,
            self.faults,
            self.calls,
            self.socket.open_url,
        )
        # Slack's rate limits: off until a test calls `ratelimits.turn_on()`
        self.ratelimits = RateLimits(lambda ref: channel_id_in(self.workspace, ref))
        self.web_api.limits = self.ratelimits
        self.scopes = self.web_api.scopes  # `emu.scopes.grant(token, [...])`: fewer scopes
        self.app = Starlette(
            routes=[
                Route("/api/{method:str}", self.web_api.endpoint, methods=["GET", "POST"]),
                *self.socket.routes(),
                *control_routes(self),
                *membership_routes(self.workspace),
                *page_routes(),
            ]
        )
        self._server: BackgroundServer | None = None
        self._base_url = ""

    # --- serving -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """ "http://127.0.0.1:PORT" once started ("" before)."""
        return self._base_url

    @base_url.setter
    def base_url(self, value: str) -> None:
        """For serving `app` yourself: tell the emulator where it is reachable."""
        self._base_url = value.rstrip("/")
        self.responses.base_url = self._base_url

    @property
    def api_url(self) -> str:
        """The Web API base to give the bot as SLACK_API_URL (ends with "/api/")."""
        return self.base_url + "/api/"

    @property
    def events_url(self) -> str | None:
        return self.deliverer.events_url

    @events_url.setter
    def events_url(self, url: str | None) -> None:
        self.deliverer.events_url = url

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve in the current event loop; port 0 picks a free port. Returns the base URL."""
        if self._server is None:
            self._server = BackgroundServer(self.app, host, port)
            self.base_url = await self._server.start()
        return self.base_url

    async def stop(self) -> None:
        self.faults.clear()  # held answers go now: nothing waits on a delay past the end
        await self.deliverer.aclose()
        if self._server is not None:
            await self._server.stop()
            self._server = None

    async def reset(self) -> None:
        """A clean workspace on the same server: initial users, channels and groups; no
        messages, views, ephemerals, triggers, faults, calls or deliveries; the manifest's
        scopes again. Keeps tokens, the events URL and the URLs already handed out."""
        await self.deliverer.cancel_pending()
        self.workspace.reset()
        self.triggers.clear()
        self.responses.clear()
        self.faults.clear()
        self.calls.clear()
        self.ratelimits.clear()
        self.deliverer.records.clear()
        self.scopes.clear()

    async def __aenter__(self) -> SlackEmulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- acting as people --------------------------------------------------------------

    async def post(
        self,
        user: str,
        channel: str,
        text: str,
        thread_ts: str | None = None,
        *,
        wait: bool = True,
        broadcast: bool = False,
        file_name: str | None = None,
    ) -> Posted:
        """`user` posts `text` (Slack wire format) in `channel` ("#name", id, or the bot for
        the DM); `wait` until the bot acknowledged the events (retries included).
        `broadcast`: a thread reply also sent to the channel; `file_name`: with a file."""
        return await self.events.post(
            user, channel, text, thread_ts, wait, broadcast=broadcast, file_name=file_name
        )

    async def click(
        self,
        user: str,
        action_id: str,
        *,
        channel: str | None = None,
        ts: str | None = None,
        view_id: str | None = None,
        value: str | None = None,
        selected: Any = None,
    ) -> Outcome:
        """Click a button / pick `selected` in a message (channel + ts, ephemerals too) or a
        view (view_id: modal or home tab)."""
        return await self.interactions.click(
            user, action_id, channel=channel, ts=ts, view_id=view_id, value=value, selected=selected
        )

    async def submit(
        self, user: str, view_id: str, values: dict[str, Any] | None = None
    ) -> Outcome:
        """Fill the open modal (values by block_id, action_id or both) and submit it."""
        return await self.interactions.submit(user, view_id, values or {})

    async def close_view(self, user: str, view_id: str) -> Outcome:
        return await self.interactions.close(user, view_id)

    async def command(self, user: str, channel: str, command: str, text: str = "") -> Outcome:
        return await self.commands.run(user, channel, command, text)

    async def open_home(self, user: str, *, wait: bool = True) -> Posted:
        return await self.events.open_home(user, wait)

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait for every event delivery still running in the background."""
        await self.deliverer.settle(timeout)

    def invite_bot(self, channel: str) -> Channel:
        """`/invite @bot` in `channel` (id or "#name"): it may post there and hears it."""
        return invite_bot(self.workspace, channel)

    def remove_bot(self, channel: str) -> Channel:
        """Take the bot out of `channel`: posts answer `not_in_channel` (unless it is public
        and the token has chat:write.public) and its messages reach the bot no more."""
        return remove_bot(self.workspace, channel)

    # --- faults and inspection ---------------------------------------------------------

    def add_fault(
        self,
        status: int,
        count: int = 1,
        *,
        retry_after: int | None = None,
        method: str | None = None,
    ) -> Fault:
        """The next `count` Web API calls (of `method`, or any) answer HTTP `status`
        (429 with Retry-After and `ratelimited`; else `fatal_error`)."""
        return self.faults.add(status, count, retry_after, method)

    def add_delay(self, seconds: float, count: int = 1, *, method: str | None = None) -> Delay:
        """The next `count` Web API calls (of `method`, or any) take effect at once but
        answer only after `seconds` (or when faults are cleared); `faults.held` counts the
        answers held back right now."""
        return self.faults.add_delay(seconds, count, method)

    @property
    def deliveries(self) -> list[Delivery]:
        return self.deliverer.records

    def state(self) -> JSON:
        return snapshot(self.workspace)

    def messages(self, channel: str) -> list[Message]:
        """Top-level messages of a channel (by id or name), oldest first."""
        found = self.workspace.find_channel(channel)
        return found.top_level() if found else []

    def replies(self, channel: str, thread_ts: str) -> list[Message]:
        found = self.workspace.find_channel(channel)
        return found.replies(thread_ts) if found else []

    def ephemerals(self, user: str | None = None) -> list[Any]:
        found = self.workspace.find_user(user) if user else None
        return [e for e in self.workspace.ephemerals if found is None or e.user == found.id]

    def open_view(self, user: str) -> View | None:
        """The modal on top of this user's stack, if any."""
        found = self.workspace.find_user(user)
        return self.workspace.top_view(found.id) if found else None

    def home_view(self, user: str) -> View | None:
        found = self.workspace.find_user(user)
        return self.workspace.home_view(found.id) if found else None
