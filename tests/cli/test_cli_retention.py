"""`hitl-bot audit archive` and what reads the archive after it: `audit verify` (with and
without a heads file), `audit export` and `report`, run as real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.clock import FakeClock
from bot.core.models import Decision
from bot.core.policy import Policy
from bot.core.states import Event
from bot.store import keys
from bot.store.requests import RequestStore
from tests.cli.test_cli import cli
from tests.support.keys import serve_signer

DAY = 86_400_000


def _store(redis: Redis, ids: Callable[[], str], days_ago: int) -> RequestStore:
    clock = FakeClock(int(time.time() * 1000) - days_ago * DAY)
    return RequestStore(redis, clock=clock, ids=ids, signer=serve_signer())


async def _decided(store: RequestStore, policy: Policy, amount: int) -> str:
    req = (
        await store.create(policy, tool="refund", args={"amount": amount}, requester="U1")
    ).request
    if amount % 2:
        d = Decision(event=Event.REJECT, actor="U2", reason_code="too_risky", text="no")
        await store.transition(req.id, d.model_copy(update={"payload_hash": req.payload_hash}))
    else:
        d = Decision(event=Event.APPROVE, actor="U2", payload_hash=req.payload_hash)
        await store.transition(req.id, d)
        await store.transition(req.id, Decision(event=Event.CLAIM, actor="w1"))
        await store.transition(req.id, Decision(event=Event.SUCCEED, detail="ok"))
    return req.id


def _figures(out: str) -> dict[str, object]:
    """A report's figures, without the times it was run at."""
    doc = json.loads(out)
    doc.pop("now_ms"), doc.pop("since_ms")
    doc["weeks"] = [w["tiers"] for w in doc["weeks"]]
    return dict(doc)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HITL_ARCHIVE_DIR": str(tmp_path / "archive")}


def _entries(out: str) -> list[dict[str, object]]:
    got = [json.loads(line) for line in out.splitlines()]
    for e in got:
        e.pop("archived", None)
    return sorted(got, key=lambda e: (str(e["request_id"]), int(str(e["seq"]))))


async def test_what_left_is_still_verified_exported_and_reported(
    redis: Redis,
    policy: Policy,
    ids: Callable[[], str],
    redis_url: str,
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    old = _store(redis, ids, days_ago=120)
    gone = [await _decided(old, policy, n) for n in (10, 11, 12)]
    recent = await _decided(_store(redis, ids, days_ago=1), policy, 20)
    heads_file = tmp_path / "heads.json"
    assert (await cli("audit", "heads", "-o", str(heads_file), redis_url=redis_url, env=env))[
        0
    ] == 0
    _, exported, _ = await cli("audit", "export", redis_url=redis_url, env=env)
    _, reported, _ = await cli("report", "--since", "200d", "--json", redis_url=redis_url, env=env)

    code, out, err = await cli("audit", "archive", redis_url=redis_url, env=env)
    assert code == 0, err
    assert "Retired 3 requests, 0 runs and 0 questions" in out
    for rid in gone:
        assert not await redis.exists(keys.request(rid), keys.audit(rid))
    assert await redis.exists(keys.request(recent))

    code, out, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 0, err
    assert "4 requests (3 of them in the archive), every audit chain intact" in out
    code, out, err = await cli(
        "audit", "verify", "--heads", str(heads_file), redis_url=redis_url, env=env
    )
    assert code == 0 and "Every kept head matches" in out, err
    code, after, err = await cli("audit", "export", redis_url=redis_url, env=env)
    assert code == 0, err
    assert _entries(after) == _entries(exported)  # every entry, once
    left = [e for e in _entries(exported) if e["request_id"] in gone]
    assert sum('"archived": true' in line for line in after.splitlines()) == len(left)
    code, again, err = await cli(
        "report", "--since", "200d", "--json", redis_url=redis_url, env=env
    )
    assert code == 0, err
    assert _figures(again) == _figures(reported)


async def test_show_finds_a_request_retention_moved_out(
    redis: Redis,
    policy: Policy,
    ids: Callable[[], str],
    redis_url: str,
    env: dict[str, str],
) -> None:
    old = _store(redis, ids, days_ago=120)
    approved, rejected = await _decided(old, policy, 10), await _decided(old, policy, 11)
    before = {}
    for rid in (approved, rejected):
        code, out, err = await cli("show", rid, "--json", redis_url=redis_url, env=env)
        assert code == 0, err
        before[rid] = json.loads(out)
        assert before[rid]["archived_at"] is None
    code, _, err = await cli("audit", "archive", redis_url=redis_url, env=env)
    assert code == 0, err
    assert not await redis.exists(keys.request(approved), keys.request(rejected))

    for rid in (approved, rejected):
        code, out, err = await cli("show", rid, "--json", redis_url=redis_url, env=env)
        assert code == 0, err
        after = json.loads(out)
        assert isinstance(after.pop("archived_at"), int) and before[rid].pop("archived_at") is None
        assert after == before[rid]  # the same request, history, chain and seals
        assert after["chain"] == "intact" and after["signatures"] == "valid"
    code, out, err = await cli("show", rejected, redis_url=redis_url, env=env)
    assert code == 0, err
    assert "state=cancelled" in out and "audit chain intact" in out and "too_risky" in out
    assert "archived 20" in out and "moved this request out of the live store" in out

    code, _, err = await cli("show", "req-nothere", redis_url=redis_url, env=env)
    assert code != 0 and "No request with id req-nothere" in err, err


async def test_an_archive_edited_cut_or_missing_is_named(
    redis: Redis,
    policy: Policy,
    ids: Callable[[], str],
    redis_url: str,
    env: dict[str, str],
) -> None:
    made: dict[int, list[str]] = {}
    for days, amounts in ((200, (10, 11)), (120, (12, 13))):
        store = _store(redis, ids, days_ago=days)
        made[days] = [await _decided(store, policy, n) for n in amounts]
    where = Path(env["HITL_ARCHIVE_DIR"])
    for older in ("150d", "90d"):
        code, _, err = await cli(
            "audit", "archive", "--older-than", older, redis_url=redis_url, env=env
        )
        assert code == 0, err
    first, newest = sorted(where.glob("segment-*"))
    assert (await cli("audit", "verify", redis_url=redis_url, env=env))[0] == 0

    text = first.read_text()
    first.write_text(text.replace('"requester":"U1"', '"requester":"U9"', 1))
    code, _, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 1 and f"archive {first.name}: its records are not the ones sealed" in err, err
    # Every reader of the archive says what it could not read, and does not exit 0.
    problem = f"archive: archive {first.name}: its records are not the ones sealed"
    code, out, err = await cli("audit", "export", redis_url=redis_url, env=env)
    assert code == 1 and problem in err and "not the whole history" in err, err
    assert made[120][0] in out and made[200][0] not in out  # the readable part, still given
    code, _, err = await cli("report", "--since", "300d", redis_url=redis_url, env=env)
    assert code == 1 and problem in err, err
    code, _, err = await cli("show", made[200][0], redis_url=redis_url, env=env)
    assert code != 0 and "The archive has 2 problem(s)" in err, err
    code, out, err = await cli("show", made[120][0], redis_url=redis_url, env=env)
    assert code == 0 and "audit chain intact" in out, err

    first.unlink()
    code, _, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 1 and "a segment is missing" in err, err
    first.write_text(text)

    newest.rename(where / "elsewhere.txt")
    code, _, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 1 and "the newest segment the store names" in err, err


CRASH = """
import os, signal, sys
from bot.store import archive, retire
at = sys.argv[1]
if at == "before-naming":
    async def advance(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)
    archive.advance = advance
else:
    async def drop(self, records):
        if records:  # the first call with something to remove: after the store was told
            os.kill(os.getpid(), signal.SIGKILL)
        return 0, 0, 0
    retire.Retention._drop = drop
from bot.cli.entry import main
sys.argv = ["hitl-bot", "audit", "archive"]
main()
"""


@pytest.mark.parametrize("at", ["before-naming", "before-removing"])
async def test_a_pass_killed_half_way_loses_nothing_and_archives_nothing_twice(
    redis: Redis,
    policy: Policy,
    ids: Callable[[], str],
    redis_url: str,
    env: dict[str, str],
    at: str,
) -> None:
    store = _store(redis, ids, days_ago=120)
    gone = [await _decided(store, policy, n) for n in (10, 11, 12, 13)]
    _, exported, _ = await cli("audit", "export", redis_url=redis_url, env=env)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CRASH,
        at,
        env=dict(os.environ) | env | {"REDIS_URL": redis_url},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    # Killed: a segment is on disk, and every record is still in the store.
    assert len(list(Path(env["HITL_ARCHIVE_DIR"]).glob("segment-*"))) == 1
    for rid in gone:
        assert await redis.exists(keys.request(rid))
    code, out, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 0, err  # half-way is not a break

    code, out, err = await cli("audit", "archive", redis_url=redis_url, env=env)
    assert code == 0, err
    for rid in gone:
        assert not await redis.exists(keys.request(rid), keys.audit(rid))
    assert len(list(Path(env["HITL_ARCHIVE_DIR"]).glob("segment-*"))) == 1  # adopted
    code, out, err = await cli("audit", "verify", redis_url=redis_url, env=env)
    assert code == 0 and "4 requests (4 of them in the archive)" in out, err
    _, after, _ = await cli("audit", "export", redis_url=redis_url, env=env)
    assert _entries(after) == _entries(exported)
