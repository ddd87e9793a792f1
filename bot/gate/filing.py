"""Filing a call as the worker and the SDK's direct mode do: one create, or, for a call
the policy exempts, a create that is claimed in the same frame without waiting for the
reply (bot/store/free_call.py). The run's steering check rides along (`unless_steered`);
the HTTP API and the SDK's client mode go through bot/gate/guarded.py instead."""

from __future__ import annotations

from typing import Any

from bot.core.policy import Policy
from bot.store.creating import Created, Prepared
from bot.store.free_call import SentCreate, send_claimed
from bot.store.requests import RequestStore


async def file_call(requests: RequestStore, policy: Policy, **fields: Any) -> Created:
    """The call as a pending (or exempt, claimed) request: `fields` as RequestStore.create
    names them (the tool, its arguments, who asks, and the create's options)."""
    return await requests.create(policy, **fields)


async def file_claimed(requests: RequestStore, prep: Prepared) -> SentCreate | None:
    """An exempt call created and claimed in one frame; None when the policy asks for a
    review or the store does not fit (the caller then files it with `file_call`)."""
    return await send_claimed(requests, prep)
