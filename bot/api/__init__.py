"""The HTTP API: the same gate as the in-process agent, for agents in any language."""

from bot.api.app import SlackHandler, create_app

__all__ = ["SlackHandler", "create_app"]
