"""The argument schema of each (requester, tool), recorded when its calls are proposed.

Read by the Edit modal to check a person's edit before it is approved, by the
request's own requester and tool: a schema belongs to whoever sent it. Two agents
with the same tool name never see each other's schema, so one token cannot plant a
schema (a looser one, or a costly one) under another agent's requests.

Two Redis hashes, each field the JSON pair `[requester, tool]`:

- `hitl:schemas`: what API callers (and the SDK) send with their calls; the latest
  one of a pair wins, as it is that caller's own schema;
- `hitl:schemas:worker`: what a worker registers for its agent's own tools. It is
  read first, and nothing sent over the API writes it, so a worker tool's schema
  cannot be replaced from outside. That order is the guarantee; a caller sending
  another schema under the same pair is also told so (422), the first time this
  process sees that schema.

Global keys, not spread over the shard tags: small, read-mostly records that no
transition script touches, so on Redis Cluster they live on one node and are read
with a plain HGET. The executor still checks approved arguments itself (see
`bot.core.args.schema`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis

from bot import messages as msg
from bot.core.args.schema import Compiled, compiled, schema_problem
from bot.core.policy import Policy
from bot.errors import ConfigError, PayloadError
from bot.store import keys

log = logging.getLogger(__name__)
SCHEMA_CACHE = 1024  # (requester, tool, schema, by worker) checked and recorded, per store


def text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def field(requester: str, tool: str) -> str:
    return json.dumps([requester, tool], separators=(",", ":"), ensure_ascii=False)


async def record(
    redis: Redis, requester: str, tool: str, schema: Mapping[str, Any], *, worker: bool = False
) -> None:
    """Remember `schema` as the arguments of `requester`'s `tool`; PayloadError if it is
    no JSON Schema, or if a worker holds another schema for the pair and `worker` is
    False (a registration racing this write still wins where schemas are read)."""
    if (problem := schema_problem(dict(schema))) is not None:
        raise PayloadError(problem)
    name = field(requester, tool)
    if worker:
        await redis.hset(keys.WORKER_SCHEMAS, name, text(schema))
        return
    held = await redis.hget(keys.WORKER_SCHEMAS, name)
    if held is not None and held != text(schema):
        raise PayloadError(msg.SCHEMA_HELD_BY_WORKER.format(tool=tool, requester=requester))
    await redis.hset(keys.TOOL_SCHEMAS, name, text(schema))


async def record_all(
    redis: Redis, requester: str, schemas: Mapping[str, Mapping[str, Any]]
) -> None:
    """Register a worker's tools for `requester` (its agent) in one round trip."""
    for tool, schema in schemas.items():
        if (problem := schema_problem(dict(schema))) is not None:
            raise PayloadError(f"{tool}: {problem}")
    if schemas:
        await redis.hset(
            keys.WORKER_SCHEMAS, mapping={field(requester, t): text(s) for t, s in schemas.items()}
        )


async def schema_of(redis: Redis, requester: str, tool: str) -> dict[str, Any] | None:
    """The recorded schema of `requester`'s `tool`, a worker's registration first; None
    when none was recorded (or it is unreadable)."""
    name = field(requester, tool)
    raw = await redis.hget(keys.WORKER_SCHEMAS, name) or await redis.hget(keys.TOOL_SCHEMAS, name)
    if not raw:
        return None
    try:
        schema = json.loads(raw)
    except ValueError:
        log.warning("the recorded schema of %s is not JSON; treating it as unknown", name)
        return None
    return schema if isinstance(schema, dict) else None


class SchemaCache:
    """Check and record a tool's schema once per store, policy and schema text: the
    checks cost more than the rest of a free call (bench/gate_overhead.py), and a
    schema this process recorded already stands unless it changes here (a worker's
    registration made meanwhile still wins where it is read: `schema_of`)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._seen: dict[tuple[str, str, str, bool], tuple[Policy, Compiled]] = {}

    async def checked(
        self, policy: Policy, requester: str, tool: str, schema: dict[str, Any], *, worker: bool
    ) -> Compiled:
        key = (requester, tool, text(schema), worker)
        hit = self._seen.get(key)
        if hit is not None and hit[0] is policy:
            return hit[1]
        if (problem := schema_problem(schema)) is not None:
            raise PayloadError(problem)
        try:  # a rule reading an argument this schema lacks is a typo: refuse, never skip
            policy.check_schema(tool, schema)
        except ConfigError as exc:
            raise PayloadError(str(exc)) from None
        await record(self.redis, requester, tool, schema, worker=worker)
        if len(self._seen) >= SCHEMA_CACHE:
            self._seen.clear()
        self._seen[key] = (policy, compiled(schema))
        return self._seen[key][1]


class ToolSchemas:
    """The functions above on one connection, for the layers that hold no client."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def record_all(self, requester: str, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        await record_all(self.redis, requester, schemas)

    async def schema_of(self, requester: str, tool: str) -> dict[str, Any] | None:
        return await schema_of(self.redis, requester, tool)
