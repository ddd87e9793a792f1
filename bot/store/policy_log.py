"""The policy changes an operator applied with `hitl-bot policy apply`: who, when, which
fragment (its sha256), the file before and after, and the tools it changed. An
append-only stream; nothing else writes it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from bot.store import keys

MAXLEN = 10_000  # policy changes are rare: years of them


@dataclass(frozen=True)
class Applied:
    at: int
    by: str
    fragment_sha256: str
    before_sha256: str
    after_sha256: str
    target: str  # the policy file written
    tools: tuple[str, ...]


async def record(redis: Redis, a: Applied) -> str:
    fields: dict[str | int, str | int] = {
        "at": a.at,
        "by": a.by,
        "fragment_sha256": a.fragment_sha256,
        "before_sha256": a.before_sha256,
        "after_sha256": a.after_sha256,
        "target": a.target,
        "tools": json.dumps(list(a.tools)),
    }
    xadd = redis.xadd(keys.POLICY_APPLIED, fields, maxlen=MAXLEN, approximate=True)  # type: ignore[arg-type]
    return cast(str, await xadd)


async def applied(redis: Redis, count: int = 100) -> list[Applied]:
    """The newest `count` changes, oldest first."""
    rows = cast(
        list[tuple[str, dict[str, str]]], await redis.xrevrange(keys.POLICY_APPLIED, count=count)
    )
    out = [
        Applied(
            at=int(f["at"]),
            by=f["by"],
            fragment_sha256=f["fragment_sha256"],
            before_sha256=f["before_sha256"],
            after_sha256=f["after_sha256"],
            target=f["target"],
            tools=tuple(json.loads(f["tools"])),
        )
        for _, f in rows
    ]
    return out[::-1]
