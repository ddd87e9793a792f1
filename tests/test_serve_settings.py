"""What `serve` demands before it starts, in HTTP mode and in Socket Mode."""

from __future__ import annotations

import pytest

from bot.config import Settings
from bot.errors import ConfigError
from bot.server.serve import check_settings


def test_http_mode_needs_token_and_signing_secret() -> None:
    with pytest.raises(ConfigError) as err:
        check_settings(Settings(slack_bot_token=None, slack_signing_secret=None))
    assert "SLACK_BOT_TOKEN" in str(err.value) and "SLACK_SIGNING_SECRET" in str(err.value)
    check_settings(Settings(slack_bot_token="xoxb-1", slack_signing_secret="s"))


def test_socket_mode_needs_no_signing_secret() -> None:
    settings = Settings(slack_bot_token="xoxb-1", slack_app_token="xapp-1")
    assert settings.socket_mode
    check_settings(settings)  # Slack is reached over the socket, not by signed HTTP
