"""The paging services an escalation level may name: PagerDuty and Opsgenie.

A level names the environment variable that holds its key, never the key: a policy
file is shared, reviewed and committed, and a key in it would be a key leaked. The
shapes here are checked as strictly as each service checks them, so a typo fails at
`policy check` rather than at three in the morning when the page is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The base URLs when neither the level's `url` nor the setting names one.
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"
OPSGENIE_URL = "https://api.opsgenie.com"  # EU accounts: https://api.eu.opsgenie.com
PAGERDUTY_URL_SETTING = "HITL_PAGERDUTY_URL"
OPSGENIE_URL_SETTING = "HITL_OPSGENIE_URL"

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_URL = re.compile(r"^https?://[^\s/]+(/\S*)?$")


def _env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        # Not echoed: what stands here may be the key itself, pasted by mistake.
        raise ValueError(
            "this is not the name of an environment variable; fix: write the variable's "
            "name (like PD_ROUTING_KEY) and put the key itself in the environment"
        )
    return value


def _url(value: str | None) -> str | None:
    if value is not None and not _URL.match(value):
        raise ValueError(f"{value!r} is not an http(s) URL; fix: write https://host/...")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PagerDuty(_Strict):
    """A PagerDuty service, through its Events API v2 integration's routing key."""

    routing_key_env: str
    severity: Literal["critical", "error", "warning", "info"] = "critical"
    url: str | None = None  # the enqueue endpoint; None: HITL_PAGERDUTY_URL or PagerDuty's

    _env = field_validator("routing_key_env")(_env_name)
    _u = field_validator("url")(_url)


class Responder(_Strict):
    """Who Opsgenie notifies: a team, user, escalation or schedule, by id or name (a
    user by id or username), as its Alert API takes them."""

    type: Literal["team", "user", "escalation", "schedule"]
    id: str | None = Field(default=None, min_length=1, max_length=200)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    username: str | None = Field(default=None, min_length=1, max_length=200)

    @model_validator(mode="after")
    def _one_identifier(self) -> Responder:
        given = [k for k in ("id", "name", "username") if getattr(self, k) is not None]
        allowed = ("id", "username") if self.type == "user" else ("id", "name")
        if len(given) != 1 or given[0] not in allowed:
            raise ValueError(
                f"an Opsgenie {self.type} responder is named by exactly one of "
                f"{' or '.join(allowed)}; fix: e.g. {{type: {self.type}, {allowed[-1]}: ...}}"
            )
        return self

    def body(self) -> dict[str, str]:
        out: dict[str, str] = {"type": self.type}
        for k in ("id", "name", "username"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        return out


class Opsgenie(_Strict):
    """An Opsgenie API integration: its key's variable and whom the alert goes to."""

    api_key_env: str
    responders: tuple[Responder, ...] = Field(default=(), max_length=50)
    priority: Literal["P1", "P2", "P3", "P4", "P5"] = "P1"
    url: str | None = None  # the API's base; None: HITL_OPSGENIE_URL or api.opsgenie.com

    _env = field_validator("api_key_env")(_env_name)
    _u = field_validator("url")(_url)


class Paged(Protocol):
    """A level (as the policy writes it, or as a request carries it) that may page."""

    @property
    def pager_url(self) -> str | None: ...
    @property
    def pagerduty(self) -> PagerDuty | None: ...
    @property
    def opsgenie(self) -> Opsgenie | None: ...


def pages(level: Paged) -> bool:
    return bool(level.pager_url or level.pagerduty or level.opsgenie)


def pager_lines(level: Paged, env: Mapping[str, str]) -> list[str]:
    """Each pager of a level, and whether its key's variable is set (never the key)."""
    out = ["pager webhook"] if level.pager_url else []
    for service, var in (
        ("PagerDuty", level.pagerduty.routing_key_env if level.pagerduty else None),
        ("Opsgenie", level.opsgenie.api_key_env if level.opsgenie else None),
    ):
        if var is not None:
            out.append(f"{service} ({var} {'set' if env.get(var) else 'NOT SET'})")
    return out
