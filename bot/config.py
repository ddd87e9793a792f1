"""Settings read from the environment (DESIGN.md section 3), in one class.

Every field is optional at load time because each command needs a different
subset (`hitl-bot policy check` needs no Slack token, `serve` does); a command
states what it needs with `Settings.require(...)`, which names every missing
variable and where to get it, instead of pydantic's generic "field required".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

import platformdirs
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.core.durations import parse_duration
from bot.core.models import SYSTEM, WORKER
from bot.errors import ConfigError

__all__ = ["DEFAULT_IDENTITY", "HOW_TO_SET", "Settings"]

APP_NAME = "hitl-bot"

# Where a person finds each value; shown after "fix: export NAME=...".
HOW_TO_SET: dict[str, str] = {
    "SLACK_BOT_TOKEN": "Slack app > OAuth & Permissions > Bot User OAuth Token, xoxb-...",
    "SLACK_SIGNING_SECRET": "Slack app > Basic Information > Signing Secret",
    "SLACK_APP_TOKEN": (
        "Slack app > Basic Information > App-Level Tokens, scope connections:write, xapp-...; "
        "leave unset for HTTP mode"
    ),
    "SLACK_API_URL": "the Slack Web API base, default https://slack.com/api/",
    "REDIS_URL": "redis://HOST:6379/0, rediss://... or unix:///PATH; unset: embedded Valkey",
    "HITL_REDIS_MAX_CONNECTIONS": (
        "the most Redis connections a process's pool opens, default 50 (waiters need none)"
    ),
    "HITL_REPLICA_ACKS": "replicas that must hold a decision or claim before it counts, default 0",
    "HITL_REPLICA_ACK_TIMEOUT_MS": "how long to wait for those replicas, default 1000",
    "HITL_MAX_WAITING_PER_IDENTITY": (
        "how many calls one API identity may leave waiting for review; past it a filing "
        "is refused with 429 too_many_waiting, default 1000"
    ),
    "HITL_OUTBOX_RETRY_MS": (
        "how long a Slack message or page not delivered waits before `serve` (this one, or "
        "another if this one died) sends it again, default 15000"
    ),
    "HITL_WEBHOOKS": (
        "where serve sends signed CloudEvents of each decision (docs/webhooks.md), "
        "comma-separated NAME=URL pairs, each with its secret in HITL_WEBHOOK_SECRET_<NAME>"
    ),
    "HITL_WEBHOOK_RETRY_MS": "the first retry's delay of an undelivered event, default 5000",
    "HITL_WEBHOOK_MAX_ATTEMPTS": "tries of an event before it is dead-lettered, default 8",
    "HITL_DATA_DIR": "a directory for the embedded Valkey's data and socket",
    "HITL_POLICY": "the path of a policy YAML file; unset: the built-in default policy",
    "HITL_SHADOW_POLICY": (
        "a second policy YAML file every create is also judged by, never enforced "
        "(hitl-bot policy shadow-report); unset: none"
    ),
    "HITL_API_TOKEN": (
        'a long random string, e.g. $(python -c "import secrets; print(secrets.token_urlsafe(32))")'
    ),
    "HITL_API_TOKENS": (
        "one agent identity per token, comma-separated NAME=TOKEN pairs, e.g. "
        "billing-agent=$TOKEN1,deploy-bot=$TOKEN2"
    ),
    "HITL_API_OPERATORS": (
        "API identities that may read and stop every agent's work (not steer, claim or "
        "cancel it), comma-separated names from HITL_API_TOKENS or `api`, e.g. ops-console"
    ),
    "HITL_SIGNING_KEY": (
        "serve's Ed25519 key, base64 of a 32-byte seed, e.g. "
        '$(python -c "import os, base64; print(base64.b64encode(os.urandom(32)).decode())")'
        "; unset: HITL_SIGNING_KEY_FILE, else HITL_DATA_DIR/signing.key, made on first start"
    ),
    "HITL_SIGNING_KEY_FILE": (
        "the path of a file holding HITL_SIGNING_KEY's value (a Docker or Kubernetes secret), "
        "readable by no other users; set one of the two"
    ),
    "HITL_SIGNING_PUBLIC_KEY": (
        "the public key decisions are checked by, as `hitl-bot keys show` prints it "
        "(comma-separated for several); unset: from HITL_SIGNING_KEY(_FILE) or "
        "HITL_DATA_DIR/signing.pub"
    ),
    "OPENAI_BASE_URL": "an OpenAI-compatible API base, e.g. https://api.openai.com/v1",
    "OPENAI_API_KEY": "the API key of the OPENAI_BASE_URL provider",
    "HITL_MODEL": "a chat model that OPENAI_BASE_URL serves, e.g. gpt-4o-mini",
    "HITL_DEFAULT_AGENT": (
        "the agent a mention of @hitl-bot starts, a name the workers offer as `/hitl run` "
        "takes it; unset: the one agent the workers offer"
    ),
    "HITL_HOST": "the address `hitl-bot serve` listens on, default 127.0.0.1",
    "HITL_PORT": "the port `hitl-bot serve` listens on, default 3000",
    "HITL_PUBLIC_URL": (
        "the https address people reach `hitl-bot serve` at from their browser, e.g. "
        "https://hitl.example.com; needed by a policy tier with step_up (passkey pages)"
    ),
    "HITL_UVLOOP": "1 to run `hitl-bot serve` on uvloop (pip install 'hitl-bot[uvloop]')",
    "HITL_FATIGUE_CHECK_S": (
        "how often serve checks for approval fatigue to tell the policy's operators of "
        "(docs/fatigue.md), in seconds, default 3600; the same check mines the App Home's "
        "policy suggestions, at most hourly; 0 turns both off"
    ),
    "HITL_FATIGUE_FAST_WINDOW": (
        "how many of an approver's last decisions the too-fast signal looks at, default 20"
    ),
    "HITL_FATIGUE_FAST_SHARE": (
        "the share of those decisions, taken faster than the card can be read, above which "
        "the operators are told, 0 to 1, default 0.5"
    ),
    "HITL_FATIGUE_CARRY_SHARE": (
        "the share of a tier's decisions in a week one person may take before the operators "
        "are told, 0 to 1, default 0.75"
    ),
    "HITL_RETENTION": (
        "how long finished requests and runs stay in the live store after they ended, "
        "like 90d (the default) or 30d; they leave only once the archive holds them "
        "(docs/retention.md); off keeps requests for ever (runs still expire 30 days idle)"
    ),
    "HITL_ARCHIVE_DIR": (
        "the directory retention writes the audit archive to (default HITL_DATA_DIR/archive): "
        "keep it on storage that outlives the machine, shared by every serve"
    ),
    "HITL_RETENTION_CHECK_S": "how often serve runs a retention pass, in seconds, default 3600",
}

MIN_TOKEN_CHARS = 16  # HITL_API_TOKEN and each token of HITL_API_TOKENS
DEFAULT_IDENTITY = "api"  # who a call made with HITL_API_TOKEN is, in the audit and on cards
MISSING = "{name} is not set; fix: export {name}=... ({how})"
INVALID = "{name} is invalid: {problem}; fix: export {name}=... ({how})"


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME))


class Settings(BaseSettings):
    """hitl-bot's configuration; each field reads the upper-case variable of the same name."""

    # No env_prefix: the names are the ones Slack and OpenAI tooling already use.
    # env_ignore_empty: `export SLACK_APP_TOKEN=` must mean unset (HTTP mode),
    # not an empty token that switches on Socket Mode.
    model_config = SettingsConfigDict(
        case_sensitive=False,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
    )

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    # A secret because a Redis URL may carry a password.
    redis_url: SecretStr | None = None
    # Commands past the cap queue for a free connection (bot/db/connection.py);
    # long-polls and SDK waits take none of these (bot/db/hub.py).
    hitl_redis_max_connections: int = Field(default=50, ge=2, le=10_000)
    # A transition a person or an executor is told about is acknowledged only once this
    # many replicas hold it (bot/db/replicas.py); 0: once the primary applied it.
    hitl_replica_acks: int = Field(default=0, ge=0, le=16)
    hitl_replica_ack_timeout_ms: int = Field(default=1000, ge=10, le=60_000)
    # How many calls one API identity may leave waiting for review; past it a filing is
    # refused with 429 too_many_waiting (bot/api/waiting.py).
    hitl_max_waiting_per_identity: int = Field(default=1000, ge=1, le=1_000_000)
    hitl_outbox_retry_ms: int = Field(default=15_000, ge=100, le=3_600_000)
    # Signed CloudEvents out (bot/telemetry/webhooks.py): NAME=URL,...; the secrets are
    # read per name from HITL_WEBHOOK_SECRET_<NAME> (bot/telemetry/webhook_config.py).
    hitl_webhooks: str | None = None
    hitl_webhook_retry_ms: int = Field(default=5_000, ge=10, le=3_600_000)
    hitl_webhook_max_attempts: int = Field(default=8, ge=1, le=100)
    hitl_data_dir: Path = Field(default_factory=_default_data_dir)
    hitl_policy: Path | None = None
    hitl_shadow_policy: Path | None = None  # judged beside HITL_POLICY, never enforced
    hitl_api_token: SecretStr | None = None
    hitl_api_tokens: SecretStr | None = None
    hitl_api_operators: str | None = None
    # serve's Ed25519 key, base64 of the 32-byte seed (unset: HITL_DATA_DIR/signing.key)
    hitl_signing_key: SecretStr | None = None
    # the same seed in a file an orchestrator mounts (a Docker or Kubernetes secret)
    hitl_signing_key_file: Path | None = None
    # the public key(s) executors check decisions by, base64 of 32 bytes, comma-separated
    # (unset: derived from HITL_SIGNING_KEY or its file, else HITL_DATA_DIR/signing.pub)
    hitl_signing_public_key: str | None = None
    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    hitl_model: str | None = None
    # The agent a mention of the bot starts (a name a worker offers, as `/hitl run` takes
    # it). Unset: the one agent the workers offer, else the mention says how to choose.
    hitl_default_agent: str | None = None
    hitl_host: str = "127.0.0.1"
    hitl_port: int = Field(default=3000, ge=0, le=65535)
    # Where people's browsers reach serve (the passkey pages, bot/passkey); its host is
    # the WebAuthn relying party id, so it must not change once passkeys are enrolled.
    hitl_public_url: str | None = None
    hitl_uvloop: bool = False  # bot/server/eventloop.py: opt-in, and an error when not installed
    # Approval-fatigue messages to the operators (bot/slack/nudges/teller.py); 0: none.
    hitl_fatigue_check_s: float = Field(default=3600.0, ge=0, le=86_400)
    hitl_fatigue_fast_window: int = Field(default=20, ge=1, le=1000)
    hitl_fatigue_fast_share: float = Field(default=0.5, ge=0, le=1)
    hitl_fatigue_carry_share: float = Field(default=0.75, ge=0, le=1)
    # Retention (bot/store/retire.py, docs/retention.md): finished requests and runs leave
    # the live store this long after they ended, once the archive holds them; "off": never.
    hitl_retention: str = "90d"
    hitl_archive_dir: Path | None = None  # unset: HITL_DATA_DIR/archive
    hitl_retention_check_s: float = Field(default=3600.0, gt=0, le=86_400)

    @field_validator("slack_api_url")
    @classmethod
    def _end_with_slash(cls, value: str) -> str:
        # slack_sdk joins method names onto base_url; without the slash
        # "http://host/api" + "chat.postMessage" loses the "api" segment.
        return value if value.endswith("/") else value + "/"

    @field_validator("hitl_public_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = urlsplit(value.strip())
        local = url.hostname in ("localhost", "127.0.0.1", "::1")
        if (
            url.scheme not in ("https", "http")
            or not url.hostname
            or (url.scheme == "http" and not local)
        ):
            raise ValueError("it must be an https:// address (http:// only for localhost)")
        if url.path not in ("", "/") or url.query or url.fragment:
            raise ValueError(
                "it must be an origin only, without a path, e.g. https://hitl.example.com"
            )
        return f"{url.scheme}://{url.netloc}"

    @field_validator("hitl_retention")
    @classmethod
    def _retention(cls, value: str) -> str:
        if value.strip().lower() != "off":
            parse_duration(value)  # a ValueError names the form
        return value.strip()

    def retention_ms(self) -> int | None:
        """How long a finished record stays in the live store; None: for ever."""
        return None if self.hitl_retention.lower() == "off" else parse_duration(self.hitl_retention)

    def archive_dir(self) -> Path:
        return self.hitl_archive_dir or self.hitl_data_dir / "archive"

    @field_validator(
        "hitl_data_dir",
        "hitl_policy",
        "hitl_shadow_policy",
        "hitl_signing_key_file",
        "hitl_archive_dir",
    )
    @classmethod
    def _expand_user(cls, value: Path | None) -> Path | None:
        # A quoted "~/..." in a unit file or .env reaches us unexpanded.
        return value.expanduser() if value is not None else None

    @classmethod
    def load(cls) -> Self:
        """Read the environment; a malformed value raises ConfigError naming the variable."""
        try:
            return cls()
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                name = str(error["loc"][0]).upper() if error["loc"] else "?"
                problems.append(
                    INVALID.format(name=name, problem=error["msg"], how=HOW_TO_SET.get(name, ""))
                )
            raise ConfigError("\n".join(problems)) from exc

    @field_validator("hitl_api_token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        # The same floor as each of HITL_API_TOKENS: a short token is guessed, and it is
        # the API's only lock. The message never repeats the value.
        if value is not None and len(value.get_secret_value().strip()) < MIN_TOKEN_CHARS:
            raise ValueError(f"it must be at least {MIN_TOKEN_CHARS} characters long")
        return value

    @field_validator("hitl_api_tokens")
    @classmethod
    def _pairs(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            _parse_identities(value.get_secret_value())
        return value

    @field_validator("hitl_api_operators")
    @classmethod
    def _operator_names(cls, value: str | None) -> str | None:
        if value is not None:
            _parse_names(value)
        return value

    def api_operators(self) -> frozenset[str]:
        """The API identities that may read and stop everyone's work."""
        return _parse_names(self.hitl_api_operators or "")

    def api_identities(self) -> dict[str, str]:
        """Bearer token -> the agent identity it stands for. HITL_API_TOKEN is "api"."""
        found: dict[str, str] = {}
        if self.hitl_api_token and self.hitl_api_token.get_secret_value():
            found[self.hitl_api_token.get_secret_value()] = DEFAULT_IDENTITY
        if self.hitl_api_tokens:
            found.update(_parse_identities(self.hitl_api_tokens.get_secret_value()))
        return found

    @property
    def socket_mode(self) -> bool:
        """True when SLACK_APP_TOKEN is set: Slack events arrive over Socket Mode, not HTTP."""
        return self.slack_app_token is not None

    def require(self, *names: str) -> Self:
        """Raise ConfigError naming every one of `names` that is unset; return self otherwise.

        Names are the environment names (SLACK_BOT_TOKEN) or the field names
        (slack_bot_token).
        """
        missing = []
        for name in names:
            field = name.lower()
            if field not in type(self).model_fields:
                raise ValueError(f"unknown setting {name!r}")
            value = getattr(self, field)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if value is None or value == "":
                missing.append(field.upper())
        if missing:
            raise ConfigError(
                "\n".join(MISSING.format(name=n, how=HOW_TO_SET.get(n, "")) for n in missing)
            )
        return self


_IDENTITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")


# The worker's own identity owns the runs people start in Slack: a token bearing it
# would reach all of them.
RESERVED = frozenset({WORKER, SYSTEM})


def _parse_names(raw: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    for name in sorted(names):
        if not _IDENTITY.match(name):
            raise ValueError(f"{name!r} is not an identity name (letters, digits, _.:-)")
    return names


def _parse_identities(raw: str) -> dict[str, str]:
    """Parse "name=token,name2=token2" into {token: name}; a malformed pair raises ValueError
    without echoing the token."""
    out: dict[str, str] = {}
    for i, pair in enumerate(p.strip() for p in raw.split(",") if p.strip()):
        name, sep, token = pair.partition("=")
        if name.strip() in RESERVED:
            raise ValueError(f"pair {i + 1} names {name.strip()}, which is the bot's own")
        if not sep or not _IDENTITY.match(name.strip()) or len(token.strip()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"pair {i + 1} is not NAME=TOKEN (a name of letters, digits, _.:- and a "
                "token of at least 16 characters)"
            )
        if token.strip() in out:
            raise ValueError(f"pair {i + 1} repeats a token: each identity needs its own")
        out[token.strip()] = name.strip()
    return out
