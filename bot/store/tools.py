"""The argument schema of each tool, recorded when the tool is registered.

One Redis hash, `hitl:tools` (tool name -> JSON Schema text), read by the Edit
modal to check a person's edit before it is approved. It is a global key, not
spread over the shard tags: it is a small, read-mostly record per tool that no
transition script touches, so on Redis Cluster it simply lives on one node and
is read with a plain HGET. The latest registration of a tool name wins; the
executor still checks approved arguments itself (see `bot.core.schema`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis

from bot.core.schema import schema_problem
from bot.errors import PayloadError
from bot.store import keys

log = logging.getLogger(__name__)


def text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


async def record(redis: Redis, tool: str, schema: Mapping[str, Any]) -> None:
    """Remember `schema` as the arguments of `tool`; PayloadError if it is no JSON Schema."""
    if (problem := schema_problem(dict(schema))) is not None:
        raise PayloadError(problem)
    await redis.hset(keys.TOOL_SCHEMAS, tool, text(schema))


async def record_all(redis: Redis, schemas: Mapping[str, Mapping[str, Any]]) -> None:
    """Record several tools in one round trip (a worker registering an agent's tools)."""
    for tool, schema in schemas.items():
        if (problem := schema_problem(dict(schema))) is not None:
            raise PayloadError(f"{tool}: {problem}")
    if schemas:
        await redis.hset(keys.TOOL_SCHEMAS, mapping={t: text(s) for t, s in schemas.items()})


async def schema_of(redis: Redis, tool: str) -> dict[str, Any] | None:
    """The recorded schema of `tool`; None when none was recorded (or it is unreadable)."""
    raw = await redis.hget(keys.TOOL_SCHEMAS, tool)
    if not raw:
        return None
    try:
        schema = json.loads(raw)
    except ValueError:
        log.warning("the recorded schema of %s is not JSON; treating it as unknown", tool)
        return None
    return schema if isinstance(schema, dict) else None
