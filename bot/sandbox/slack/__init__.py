"""A local Slack for the bot to talk to: Web API, signed event / interactivity delivery,
a control API to act as people, and a page to watch and click.

    from bot.sandbox.slack import SlackEmulator

See `emulator.py` for the entry point and `control.py` for the `/_emu/` endpoints.
"""

from bot.sandbox.slack.acting import Outcome
from bot.sandbox.slack.defaults import BOT_ID, BOT_NAME, BOT_USER_ID, DEFAULT_CHANNEL_NAMES
from bot.sandbox.slack.emulator import SlackEmulator
from bot.sandbox.slack.errors import ControlError, WebApiError
from bot.sandbox.slack.serving import BackgroundServer
from bot.sandbox.slack.to_app.delivery import Delivery, signature
from bot.sandbox.slack.to_app.events import Posted
from bot.sandbox.slack.workspace import Channel, Ephemeral, Message, User, UserGroup, View

__all__ = [
    "BOT_ID",
    "BOT_NAME",
    "BOT_USER_ID",
    "DEFAULT_CHANNEL_NAMES",
    "BackgroundServer",
    "Channel",
    "ControlError",
    "Delivery",
    "Ephemeral",
    "Message",
    "Outcome",
    "Posted",
    "SlackEmulator",
    "User",
    "UserGroup",
    "View",
    "WebApiError",
    "signature",
]
