"""Where a feature joins the Slack side, so the core names none of them.

A feature (standing grants, the batch digest) is one `Feature`: its part of the card
flow the notifier runs (`CardPart`), its Bolt listeners, its `/hitl` verbs and what it
adds to the App Home. The notifier and the commands call every registered feature at
these points; the list is bot/slack/features.py, and removing a feature is removing
its folder and its line there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.core.models import ActionRequest, Run
from bot.core.policy import Policy
from bot.slack.blocks.render import Rendered
from bot.store.stores import StoreSet

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp

    from bot.gate.runtime import Runtime
    from bot.slack.delivery.once import OncePoster
    from bot.slack.listeners.approvals import Approvals

Block = dict[str, Any]


@dataclass(frozen=True)
class Tools:
    """What the notifier builds a feature's card part with."""

    rt: StoreSet
    client: AsyncWebClient
    once: OncePoster
    policy: Policy | None  # None: the process has no policy (no standing approvals)
    consumer: str  # the notifier's name: who holds a lease a part takes


class CardPart:
    """A feature's part of a request's card flow. Each point does nothing unless the
    feature overrides it; the notifier calls every registered part in turn."""

    async def on_new(self, req: ActionRequest) -> ActionRequest:
        """A request just filed, before its card is posted: `req` as the feature leaves
        it (a grant may approve it, and then no card is posted)."""
        return req

    async def passed(self, req: ActionRequest, run: Run | None, where: str) -> bool:
        """A call that needed no card: True if this part told people about it."""
        return False

    async def extra(self, req: ActionRequest) -> list[Block]:
        """Blocks this part adds to the request's card, above its foot line."""
        return []

    async def after(self, rid: str) -> None:
        """The request's card was drawn or redrawn (it may be decided by now)."""


Verb = Callable[["Runtime", AsyncWebClient, str, str], Awaitable[Rendered]]
Home = Callable[["Runtime", AsyncWebClient, str, dict[str, Any]], Awaitable[dict[str, Any]]]
Listen = Callable[["AsyncApp", "Runtime", "Approvals"], None]


@dataclass(frozen=True)
class Feature:
    name: str
    card_part: Callable[[Tools], CardPart] | None = None
    listen: Listen | None = None  # registers its Bolt listeners
    verbs: Mapping[str, Verb] = field(default_factory=dict)  # `/hitl VERB rest`
    home: Home | None = None  # the App Home view, with this feature's blocks added
