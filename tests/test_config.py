"""Settings: the environment names of DESIGN.md section 3, secrets that never print."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import platformdirs
import pytest

from bot.config import HOW_TO_SET, Settings
from bot.errors import ConfigError

ENV_NAMES = list(HOW_TO_SET)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults() -> None:
    settings = Settings()

    assert settings.slack_bot_token is None
    assert settings.slack_app_token is None
    assert not settings.socket_mode
    assert settings.slack_api_url == "https://slack.com/api/"
    assert settings.redis_url is None
    assert settings.hitl_data_dir == Path(platformdirs.user_data_dir("hitl-bot"))
    assert settings.hitl_policy is None
    assert settings.hitl_host == "127.0.0.1"
    assert settings.hitl_port == 3000


def test_reads_every_environment_name(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    values = {
        "SLACK_BOT_TOKEN": "xoxb-bot",
        "SLACK_SIGNING_SECRET": "signing",
        "SLACK_APP_TOKEN": "xapp-app",
        "SLACK_API_URL": "http://127.0.0.1:9000/api",
        "REDIS_URL": "redis://:pw@localhost:6379/0",
        "HITL_DATA_DIR": str(tmp_path / "data"),
        "HITL_POLICY": str(tmp_path / "policy.yaml"),
        "HITL_API_TOKEN": "api-token-0123456789",
        "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1",
        "OPENAI_API_KEY": "sk-key",
        "HITL_MODEL": "scripted",
        "HITL_HOST": "0.0.0.0",
        "HITL_PORT": "8080",
    }
    for name, value in values.items():
        clean_env.setenv(name, value)

    settings = Settings()

    assert settings.slack_bot_token is not None
    assert settings.slack_bot_token.get_secret_value() == "xoxb-bot"
    assert settings.slack_signing_secret is not None
    assert settings.slack_signing_secret.get_secret_value() == "signing"
    assert settings.slack_app_token is not None
    assert settings.slack_app_token.get_secret_value() == "xapp-app"
    assert settings.socket_mode
    assert settings.slack_api_url == "http://127.0.0.1:9000/api/"  # slash added
    assert settings.redis_url is not None
    assert settings.redis_url.get_secret_value() == "redis://:pw@localhost:6379/0"
    assert settings.hitl_data_dir == tmp_path / "data"
    assert settings.hitl_policy == tmp_path / "policy.yaml"
    assert settings.hitl_api_token is not None
    assert settings.hitl_api_token.get_secret_value() == "api-token-0123456789"
    assert settings.openai_base_url == "http://127.0.0.1:8000/v1"
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-key"
    assert settings.hitl_model == "scripted"
    assert settings.hitl_host == "0.0.0.0"
    assert settings.hitl_port == 8080


def test_every_field_has_its_environment_name_and_a_hint() -> None:
    assert sorted(name.lower() for name in HOW_TO_SET) == sorted(Settings.model_fields)


def test_secrets_never_print(clean_env: pytest.MonkeyPatch) -> None:
    secrets = {
        "SLACK_BOT_TOKEN": "xoxb-SECRET1",
        "SLACK_SIGNING_SECRET": "SECRET2",
        "SLACK_APP_TOKEN": "xapp-SECRET3",
        "HITL_API_TOKEN": "SECRET4-0123456789",
        "OPENAI_API_KEY": "sk-SECRET5",
        "REDIS_URL": "redis://:SECRET6@localhost:6379/0",
    }
    for name, value in secrets.items():
        clean_env.setenv(name, value)

    settings = Settings()
    shown = [repr(settings), str(settings), settings.model_dump_json(), str(settings.model_dump())]

    for text in shown:
        for value in secrets.values():
            assert value not in text


def test_empty_variable_means_unset(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("SLACK_APP_TOKEN", "")
    clean_env.setenv("HITL_PORT", "")

    settings = Settings()

    assert settings.slack_app_token is None
    assert not settings.socket_mode
    assert settings.hitl_port == 3000


def test_data_dir_expands_the_home_directory(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HITL_DATA_DIR", "~/hitl-data")

    assert Settings().hitl_data_dir == Path.home() / "hitl-data"


def test_require_names_the_missing_variable_and_how_to_set_it() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings().require("SLACK_SIGNING_SECRET")

    assert str(caught.value) == (
        "SLACK_SIGNING_SECRET is not set; fix: export SLACK_SIGNING_SECRET=... "
        "(Slack app > Basic Information > Signing Secret)"
    )


def test_require_names_every_missing_variable(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("SLACK_BOT_TOKEN", "xoxb-1")

    with pytest.raises(ConfigError) as caught:
        Settings().require("SLACK_BOT_TOKEN", "slack_signing_secret", "HITL_API_TOKEN")

    lines = str(caught.value).splitlines()
    assert [line.split()[0] for line in lines] == ["SLACK_SIGNING_SECRET", "HITL_API_TOKEN"]


def test_require_returns_the_settings_when_all_are_set(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    clean_env.setenv("HITL_MODEL", "m")

    settings = Settings()

    assert settings.require("SLACK_BOT_TOKEN", "HITL_MODEL") is settings


def test_require_rejects_an_unknown_name() -> None:
    with pytest.raises(ValueError, match="SLACK_TOKEN"):
        Settings().require("SLACK_TOKEN")


def test_load_turns_a_bad_value_into_a_config_error(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HITL_PORT", "eighty")

    with pytest.raises(ConfigError, match=r"^HITL_PORT is invalid: .*fix: export HITL_PORT="):
        Settings.load()


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="frozen"):
        settings.hitl_port = 1


def test_api_operators_are_names(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HITL_API_OPERATORS", "ops-console, audit")
    assert Settings.load().api_operators() == {"ops-console", "audit"}
    clean_env.setenv("HITL_API_OPERATORS", "ops console")
    with pytest.raises(ConfigError, match="HITL_API_OPERATORS"):
        Settings.load()
    clean_env.delenv("HITL_API_OPERATORS")
    assert Settings.load().api_operators() == frozenset()


def test_no_token_may_bear_the_workers_identity(clean_env: pytest.MonkeyPatch) -> None:
    # It owns every run started in Slack: a token named so would reach all of them.
    clean_env.setenv("HITL_API_TOKENS", "worker=a-long-enough-token-123")
    with pytest.raises(ConfigError, match="HITL_API_TOKENS") as err:
        Settings.load()
    assert "a-long-enough-token-123" not in str(err.value)


@pytest.mark.parametrize("token", ["Zq", "fifteen-chars-x", "  short-padded   "])
def test_a_short_hitl_api_token_is_refused_naming_it_not_echoing_it(
    clean_env: pytest.MonkeyPatch, token: str
) -> None:
    clean_env.setenv("HITL_API_TOKEN", token)

    with pytest.raises(ConfigError) as caught:
        Settings.load()

    text = str(caught.value)
    assert text.startswith("HITL_API_TOKEN is invalid") and "16 characters" in text
    assert token.strip() not in text


def test_a_sixteen_character_hitl_api_token_is_accepted(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HITL_API_TOKEN", "sixteen-chars-ok")

    assert Settings.load().api_identities() == {"sixteen-chars-ok": "api"}


async def test_serve_with_a_short_hitl_api_token_does_not_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in HOW_TO_SET}
    env |= {"HITL_API_TOKEN": "a", "HITL_DATA_DIR": str(tmp_path), "HITL_PORT": "0"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0
    assert "HITL_API_TOKEN is invalid" in err.decode(), err.decode()
    assert not any(tmp_path.iterdir())  # refused before anything started: no Valkey


def test_the_public_url_is_kept_as_an_origin(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HITL_PUBLIC_URL", "https://hitl.example.com/")
    assert Settings.load().hitl_public_url == "https://hitl.example.com"
    clean_env.setenv("HITL_PUBLIC_URL", "http://localhost:3000")
    assert Settings.load().hitl_public_url == "http://localhost:3000"


@pytest.mark.parametrize(
    "value", ["http://hitl.example.com", "https://hitl.example.com/approve", "hitl.example.com"]
)
def test_a_public_url_browsers_cannot_trust_is_refused_naming_it(
    clean_env: pytest.MonkeyPatch, value: str
) -> None:
    clean_env.setenv("HITL_PUBLIC_URL", value)
    with pytest.raises(ConfigError, match=r"^HITL_PUBLIC_URL is invalid: .*https://"):
        Settings.load()
