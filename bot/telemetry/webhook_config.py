"""HITL_WEBHOOKS: where the signed events go, each URL with its own secret."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.config import Settings
from bot.errors import ConfigError
from bot.telemetry import messages as msg

SECRET_PREFIX = "HITL_WEBHOOK_SECRET_"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class Webhook:
    name: str
    url: str
    secret: bytes = field(repr=False)

    @property
    def group(self) -> str:
        """Its consumer group on the events streams: one per webhook, so a receiver
        that is down delays only its own events."""
        return f"webhook:{self.name}"


def secret_var(name: str) -> str:
    return SECRET_PREFIX + re.sub(r"[^A-Z0-9]", "_", name.upper())


def webhooks(settings: Settings, env: Mapping[str, str] | None = None) -> list[Webhook]:
    """Every configured webhook; a malformed entry or a missing secret stops start-up."""
    env = os.environ if env is None else env
    out: list[Webhook] = []
    for part in (settings.hitl_webhooks or "").split(","):
        if not part.strip():
            continue
        name, eq, url = part.strip().partition("=")
        name, url = name.strip().lower(), url.strip()
        if not eq or not _NAME.match(name) or not url.startswith(("http://", "https://")):
            raise ConfigError(msg.WEBHOOK_BAD.format(part=part.strip()))
        if any(w.name == name for w in out):
            raise ConfigError(msg.WEBHOOK_TWICE.format(name=name))
        secret = env.get(secret_var(name), "")
        if len(secret) < 16:
            raise ConfigError(msg.WEBHOOK_SECRET.format(name=name, var=secret_var(name)))
        out.append(Webhook(name, url, secret.encode()))
    return out
