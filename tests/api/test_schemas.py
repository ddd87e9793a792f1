"""A caller's args_schema cannot hang the bot, and it is that caller's alone.

Over real HTTP, against one uvicorn server: a pattern that backtracks for minutes on
Python's `re` is answered in milliseconds while `/healthz` stays prompt; a pattern
RE2 cannot run, a schema past a bound, or a check past its budget is a 422 naming
what was refused; and a schema is kept per (identity, tool), a worker's apart.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from redis.asyncio import Redis

from bot.core.args.safeschema import MAX_STEPS
from bot.core.args.schema import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH
from bot.core.args.schemabounds import MAX_KEYWORDS
from bot.store import tools
from tests.api.conftest import AUTH
from tests.api.live import AGENT_TOKEN, LiveServer

AGENT = {"Authorization": f"Bearer {AGENT_TOKEN}"}  # identity "agent-7"; AUTH is "api"
EVIL = "^(a+)+$"  # catastrophic on a backtracking engine: 2**30 paths for 30 "a"s
FAST_S = 1.0


def _one(prop: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": prop}, **extra}


async def _post(c: httpx.AsyncClient, args: Any, schema: Any, **kw: Any) -> httpx.Response:
    return await c.post(
        "/v1/approvals", json={"tool": "claw", "args": args, "args_schema": schema}, **kw
    )


async def test_a_backtracking_pattern_is_answered_at_once_and_healthz_stays_prompt(
    live: LiveServer,
) -> None:
    schema = _one({"type": "string", "pattern": EVIL})
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:

        async def timed(call: Any) -> tuple[httpx.Response, float]:
            started = time.monotonic()
            resp = await call
            return resp, time.monotonic() - started

        (refused, took), (health, health_took) = await asyncio.gather(
            timed(_post(c, {"a": "a" * 30 + "!"}, schema)), timed(c.get("/healthz"))
        )
        assert refused.status_code == 422, refused.text
        assert "does not match" in refused.text and took < FAST_S, (took, refused.text)
        assert health.status_code == 200 and health_took < FAST_S

        # Longer text, many times over: still linear, still prompt.
        started = time.monotonic()
        answers = await asyncio.gather(
            *(_post(c, {"a": "a" * 5000 + "!"}, schema) for _ in range(20)), c.get("/healthz")
        )
        assert [r.status_code for r in answers] == [422] * 20 + [200]
        assert time.monotonic() - started < 5 * FAST_S

        fits = await _post(c, {"a": "a" * 30}, schema)
        assert fits.status_code == 201, fits.text


async def test_a_plain_pattern_still_accepts_and_refuses(live: LiveServer) -> None:
    schema = _one({"type": "string", "pattern": "^[a-z]+-[0-9]{3}$"}, required=["a"])
    named = {"type": "object", "patternProperties": {"^x-[a-z]+$": {"type": "integer"}},
             "additionalProperties": False}  # fmt: skip
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        assert (await _post(c, {"a": "bear-123"}, schema)).status_code == 201
        wrong = await _post(c, {"a": "Bear-123"}, schema)
        assert wrong.status_code == 422 and "'Bear-123' does not match" in wrong.text
        assert (await _post(c, {"x-force": 3}, named)).status_code == 201
        bad_type = await _post(c, {"x-force": "hard"}, named)
        assert bad_type.status_code == 422 and "x-force" in bad_type.text
        unnamed = await _post(c, {"y-force": 3}, named)
        assert unnamed.status_code == 422 and "y-force" in unnamed.text


async def test_a_pattern_re2_cannot_run_is_refused_naming_where_it_is(live: LiveServer) -> None:
    cases = {
        "args_schema.properties.a.pattern": _one({"type": "string", "pattern": "(a)\\1"}),
        "args_schema.properties.a.items.pattern": _one(
            {"type": "array", "items": {"type": "string", "pattern": "^(?=a)"}}
        ),
        "args_schema.patternProperties.(?<!x)y": {
            "type": "object",
            "patternProperties": {"(?<!x)y": {"type": "integer"}},
        },
        "args_schema.$defs.name.pattern": {
            "type": "object",
            "$defs": {"name": {"type": "string", "pattern": "(?!admin)"}},
            "properties": {"a": {"$ref": "#/$defs/name"}},
        },
    }
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        for where, schema in cases.items():
            resp = await _post(c, {"a": "x"}, schema)
            assert resp.status_code == 422, (where, resp.text)
            assert where in resp.text and "RE2" in resp.text, (where, resp.text)
        both = {"type": "object", "patternProperties": {"^a": True},
                "unevaluatedProperties": False}  # fmt: skip
        resp = await _post(c, {}, both)
        assert resp.status_code == 422 and "unevaluatedProperties" in resp.text, resp.text


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _fan_out(levels: int) -> dict[str, Any]:
    """A few hundred bytes that jsonschema would expand into 2**levels checks."""
    defs: dict[str, Any] = {
        f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "integer"}
    return {"type": "object", "$defs": defs, "properties": {"a": {"$ref": "#/$defs/d0"}}}


async def test_a_schema_past_a_bound_is_refused_naming_the_limit(live: LiveServer) -> None:
    big = _one({"type": "string", "description": "x" * MAX_SCHEMA_BYTES})
    wide = {
        "type": "object",
        "properties": {f"p{i}": {"type": "integer", "minimum": 0} for i in range(300)},
    }
    bounds = {
        f"the limit is {MAX_SCHEMA_BYTES}": big,
        f"deeper than {MAX_SCHEMA_DEPTH} levels": _nested(MAX_SCHEMA_DEPTH),
        f"more than {MAX_KEYWORDS} keywords": wide,
    }
    # CPU time of this process, which runs the API server on a thread: what a bound saves
    # is work, and wall time on a loaded machine counts other processes' turns as well.
    async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
        for words, schema in bounds.items():
            started = time.process_time()
            resp = await _post(c, {}, schema)
            assert resp.status_code == 422 and words in resp.text, (words, resp.text[:300])
            assert time.process_time() - started < FAST_S
        # Within every bound as written, but its check would fan out to 2**40 steps.
        started = time.process_time()
        costly = await _post(c, {"a": 1}, _fan_out(40))
        assert costly.status_code == 422 and f"{MAX_STEPS} steps" in costly.text, costly.text
        assert time.process_time() - started < FAST_S
        # Many patterns over one long text: the budget counts the characters each one
        # reads (RE2's slowest patterns take about 1 us a character), so it stops early.
        slow = [{"pattern": f"^(?:(a|b)*a(a|b){{12}}){{1,5}}x{i}"} for i in range(16)]
        text = "".join("ab"[(i * 7919) % 3 % 2] for i in range(60_000))
        started = time.process_time()
        costly = await _post(c, {"a": text}, _one({"type": "string", "allOf": slow}))
        assert costly.status_code == 422 and f"{MAX_STEPS} steps" in costly.text, costly.text
        assert time.process_time() - started < FAST_S
        # uniqueItems over thousands of objects: compared in linear time, not pairwise.
        unique = _one({"type": "array", "uniqueItems": True})
        started = time.process_time()
        many = await _post(c, {"a": [{"n": i} for i in range(4000)] + [{"n": 0}]}, unique)
        assert many.status_code == 422 and "non-unique" in many.text
        assert time.process_time() - started < FAST_S
        assert (await _post(c, {"a": [{"n": i} for i in range(4000)]}, unique)).status_code == 201


async def test_a_remote_ref_is_never_fetched(live: LiveServer) -> None:
    fetched: list[bytes] = []

    async def listen(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        fetched.append(await reader.read(100))
        writer.close()

    server = await asyncio.start_server(listen, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    schema = _one({"$ref": f"http://127.0.0.1:{port}/schema.json"})
    try:
        async with httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as c:
            resp = await _post(c, {"a": 1}, schema)
    finally:
        server.close()
    assert resp.status_code == 422 and "cannot be applied" in resp.text, resp.text
    assert fetched == []


async def test_another_identitys_schema_for_the_same_tool_changes_nothing_of_mine(
    live: LiveServer, redis: Redis
) -> None:
    mine = _one({"type": "integer", "maximum": 10}, additionalProperties=False)
    loose: dict[str, Any] = {"type": "object"}
    async with (
        httpx.AsyncClient(base_url=live.url, headers=AUTH, timeout=30) as a,
        httpx.AsyncClient(base_url=live.url, headers=AGENT, timeout=30) as b,
    ):
        assert (await _post(a, {"a": 5}, mine)).status_code == 201
        assert (await _post(b, {"a": 500, "extra": 1}, loose)).status_code == 201  # its own
        assert await tools.schema_of(redis, "api", "claw") == mine
        assert await tools.schema_of(redis, "agent-7", "claw") == loose
        # And the other way round: the last writer of another identity never wins.
        assert (await _post(a, {"a": 6}, mine)).status_code == 201
        assert await tools.schema_of(redis, "agent-7", "claw") == loose


async def test_a_worker_tools_schema_cannot_be_replaced_over_the_api(
    live: LiveServer, redis: Redis
) -> None:
    # A worker registers its agent's tools (bot/agent/worker.py), here for an agent whose
    # requester is agent-7, the name that token also carries.
    held = _one({"type": "integer", "maximum": 10})
    await tools.record_all(redis, "agent-7", {"winch": held})
    async with httpx.AsyncClient(base_url=live.url, headers=AGENT, timeout=30) as b:
        body = {"tool": "winch", "args": {"a": 500}, "args_schema": {"type": "object"}}
        looser = await b.post("/v1/approvals", json=body)
        assert looser.status_code == 422 and "registered by the worker" in looser.text
        body = {"tool": "winch", "args": {"a": 5}, "args_schema": held}
        same = await b.post("/v1/approvals", json=body)  # the same schema, sent along: fine
        assert same.status_code == 201, same.text
    assert await tools.schema_of(redis, "agent-7", "winch") == held
