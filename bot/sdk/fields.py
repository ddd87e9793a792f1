"""The fields every way of asking for approval takes (`Gate.request_approval`,
`submit`, `propose`, the decorators), typed once for all of them."""

from __future__ import annotations

from typing import Any, TypedDict

from bot.core.models import RiskTier


class CallFields(TypedDict, total=False):
    """What every way of asking for approval takes besides the tool and its arguments.

    `requester`: over HTTP the requester is the API token's identity: one other than
    the gate's default is sent, and the server refuses it unless it is that identity.
    `run_id`: the agent run the call belongs to.
    `run_title`: what that run is, for people (its name in Slack and `hitl-bot runs`);
    the first call under a new run id names it.
    `channel`: where it is reviewed (the gate's `channel` if None): only one of the
    policy's review channels for the tier is accepted.
    `idempotency_key`: the same key with the same call finds the same request again;
    with another call, IdempotencyConflict.
    `risk`: raises the tier the policy gives; never lowers it.
    `on_behalf_of`: the person the agent acts for; they may reject, never approve.
    `args_schema`: the JSON Schema of the tool's arguments; recorded for the tool so a
    person's edit that does not fit it is refused before it is approved.
    """

    risk: RiskTier | str | None
    run_id: str | None
    run_title: str | None
    requester: str | None
    channel: str | None
    idempotency_key: str | None
    on_behalf_of: str | None
    args_schema: dict[str, Any] | None
