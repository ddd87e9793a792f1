"""Retention: finished requests and runs leave the live store, after the archive holds
them (bot/store/archive.py).

One pass picks what ended before the cutoff, checks each request's history (its chain,
its seals, its order: a history that does not verify stays where `audit verify` names
it), writes the lot to one sealed segment, tells the store that segment is the newest,
and only then deletes each record, and only if it is still the one archived (its chain
head, a run's last update): a record that moved meanwhile stays for the next pass.

A pass killed at any point loses nothing: before the store is told, the records are
all still there (the segment is adopted by the next pass, whose `prev` it already is);
after, the next pass finishes the deletions of the newest segment first.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from redis.asyncio import Redis

from bot.clock import Clock
from bot.core.models import RUN_FINAL
from bot.core.proof import archive as fmt
from bot.core.proof.chain import line_hash, verify
from bot.core.proof.chain_order import order_problems
from bot.core.proof.seal import Verify, unsealed
from bot.core.states import FINAL
from bot.signing import Signer
from bot.store import archive, keys
from bot.store import retire_questions as loose
from bot.store.run.run_index import left as run_left

log = logging.getLogger(__name__)

BATCH = 500  # records a pass reads per round trip
PAGES = 20  # pages of candidates a pass looks at per shard, so unfinished ones cannot stall it
RUN_TTL_MARGIN_MS = 2 * 86_400_000  # a run idle this close to its TTL leaves through here
_FINAL = frozenset(s.value for s in FINAL)
_RUN_FINAL = frozenset(s.value for s in RUN_FINAL)

# Delete a request archived at chain head ARGV[2], only if it still stands there and is
# final. KEYS: its hash, audit, the shard's `every` index, posts, views, wake.
DROP_REQUEST = (
    """
local h = redis.call('HMGET', KEYS[1], 'audit_head', 'state')
if h[1] ~= ARGV[2] then return 0 end
local final = {"""
    + ", ".join(f"['{s}']=true" for s in sorted(_FINAL))
    + """}
if not final[h[2]] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[6])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
"""
)

# Delete a run archived at `updated_at` ARGV[1] with ARGV[2] audit lines, only if neither
# moved. KEYS: the run's hash, then every other key of the run's slot.
DROP_RUN = """
if redis.call('HGET', KEYS[1], 'updated_at') ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('DEL', unpack(KEYS))
return 1
"""


def _run_slot_keys(run_id: str) -> list[str]:
    return [
        keys.run(run_id),
        keys.run_audit(run_id),
        keys.transcript(run_id),
        keys.steering(run_id),
        keys.run_owner(run_id),
        keys.run_waiting(run_id),
        keys.run_questions(run_id),
        keys.run_requests(run_id),
    ]


@dataclass
class Picked:
    prev: str  # the newest segment's sha when the records were read
    at: int
    records: list[dict[str, Any]]
    heads: list[fmt.Head]
    kept: list[str]


@dataclass
class Retired:
    requests: int = 0
    runs: int = 0
    questions: int = 0
    kept: list[str] = field(default_factory=list)  # ids whose history did not verify
    segment: Path | None = None


class Retention:
    def __init__(
        self, redis: Redis, signer: Signer, directory: Path, trusted: Verify, clock: Clock
    ) -> None:
        self.redis = redis
        self.signer = signer
        self.directory = directory
        self.trusted = trusted
        self.clock = clock
        # The segment whose deletions this instance saw through, so the next pass does
        # not read, check and delete it all again (serve runs passes back to back).
        self._finished = ""
        self._drop_request = redis.register_script(DROP_REQUEST)
        self._drop_run = redis.register_script(DROP_RUN)

    async def due(self, keep_ms: int, run_ttl_ms: int) -> bool:
        """Whether a pass may have anything to move (cheap: a count per index), so an
        idle store is not written to, not even a lease, until something is old enough."""
        now = self.clock()
        pipe = self.redis.pipeline(transaction=False)
        for shard in range(keys.SHARDS):
            pipe.zcount(keys.every(shard), 0, now - keep_ms)
        cut = now - self._run_keep(keep_ms, run_ttl_ms)
        pipe.zcount(keys.RUNS_ALL, 0, cut)
        return any(int(n) for n in await pipe.execute()) or await loose.due(self.redis, cut)

    def _run_keep(self, keep_ms: int, run_ttl_ms: int) -> int:
        return min(keep_ms, max(0, run_ttl_ms - RUN_TTL_MARGIN_MS))

    async def pass_once(self, keep_ms: int, run_ttl_ms: int) -> Retired:
        """Archive and remove what ended more than `keep_ms` ago (runs: or `run_ttl_ms`
        less a margin, before their own expiry would take them uncopied)."""
        return await self.commit(await self.collect(keep_ms, run_ttl_ms))

    async def collect(self, keep_ms: int, run_ttl_ms: int) -> Picked:
        """What leaves in this pass, read after the last pass was finished."""
        newest = await self._recover()
        now = self.clock()
        records, heads, kept = await self._requests(now - keep_ms)
        run_cut = now - self._run_keep(keep_ms, run_ttl_ms)
        records += await self._runs(run_cut, now)
        # a question outside any run expires as a run does: it leaves at the runs' cut
        records += await loose.collect(self.redis, run_cut, BATCH)
        return Picked(newest[1] if newest else "", now, records, heads, kept)

    async def commit(self, picked: Picked) -> Retired:
        """Write `picked` as the next segment after the one it read as newest, and remove
        it from the store; nothing at all if another pass got there first."""
        out = Retired(kept=picked.kept)
        if picked.kept:  # one line a pass, not one per request every hour
            log.warning(
                "retention kept %d finished requests whose history does not verify "
                "(hitl-bot audit verify names why), such as %s",
                len(picked.kept),
                ", ".join(picked.kept[:5]),
            )
        if not picked.records:
            return out
        text = fmt.build(
            picked.records,
            picked.heads,
            prev=picked.prev,
            at=picked.at,
            key_id=self.signer.key_id,
            sign=self.signer.sign,
        )
        name = archive.segment_name(picked.at)
        path = archive.write_segment(self.directory, name, text)
        sha = fmt.file_sha(text)
        if not await archive.advance(self.redis, picked.prev, name, sha):
            path.unlink(missing_ok=True)  # another pass extended the chain first
            log.warning("retention: another pass archived first; this one wrote nothing")
            return out
        out.segment = path
        done = await self._drop(picked.records)
        self._finished = sha
        out.requests, out.runs, out.questions = done
        log.info(
            "retention archived %d requests, %d runs and %d questions to %s",
            *done,
            path,
            extra={"segment": str(path)},
        )
        return out

    async def _recover(self) -> tuple[str, str] | None:
        """The newest segment, after adopting one a killed pass wrote but never named and
        finishing the deletions of the newest (both no-ops after a clean pass). Reads the
        newest segment and any written after it, never the whole archive."""
        newest = await archive.newest(self.redis)
        name, sha = newest if newest else ("", "")
        tip: list[dict[str, Any]] = []
        if newest and sha != self._finished:
            seg = archive.read_one(self.directory / name, self.trusted)
            if seg is None:  # named but unreadable: `audit verify` says so; delete nothing
                return newest
            tip = seg.records
        for later in archive.written_after(self.directory, name, self.trusted):
            if later[1].prev != sha:
                continue
            if not await archive.advance(self.redis, sha, later[0], later[1].sha):
                return await archive.newest(self.redis)
            log.warning("retention: adopted segment %s a stopped pass left", later[0])
            name, sha, tip = later[0], later[1].sha, later[1].records
        await self._drop(tip)
        self._finished = sha
        return (name, sha) if sha else None

    async def _requests(
        self, cutoff: int
    ) -> tuple[list[dict[str, Any]], list[fmt.Head], list[str]]:
        records: list[dict[str, Any]] = []
        heads: list[fmt.Head] = []
        kept: list[str] = []
        for shard in range(keys.SHARDS):
            start = 0
            for _ in range(PAGES):
                ids = cast(
                    list[str],
                    await self.redis.zrangebyscore(keys.every(shard), 0, cutoff, start, BATCH),
                )
                if not ids:
                    break
                start += len(ids)
                for rec in await self._read_requests(ids):
                    if len(records) >= BATCH:  # the rest of the page: the next pass
                        return records, heads, kept
                    problem = self._problem(rec, cutoff)
                    if problem == "":
                        continue  # not finished, or finished too recently
                    if problem is not None:
                        kept.append(rec["id"])
                        log.debug("retention kept request %s: %s", rec["id"], problem)
                        continue
                    records.append(rec)
                    lines = rec["audit"]
                    heads.append(fmt.Head(rec["id"], line_hash(lines[-1]), len(lines)))
                if len(records) >= BATCH:
                    return records, heads, kept
        return records, heads, kept

    async def _read_requests(self, ids: list[str]) -> list[dict[str, Any]]:
        pipe = self.redis.pipeline(transaction=False)
        for rid in ids:
            pipe.hgetall(keys.request(rid))
            pipe.lrange(keys.audit(rid), 0, -1)
            pipe.hget(keys.grant_keys("")[4], rid)
        got = await pipe.execute()
        out = []
        for i, rid in enumerate(ids):
            h, lines, gid = got[3 * i], got[3 * i + 1], got[3 * i + 2]
            if h and lines:
                out.append({"kind": "request", "id": rid, "fields": h, "audit": lines, "src": gid})
        ended = await self._grants_ended([str(r["src"]) for r in out if r["src"]])
        for r in out:
            # A grant's source is read by every pass under the grant: it stays until the
            # grant has ended (expired or revoked), and counts as ending then.
            gid = r.pop("src")
            r["_grant_end"] = ended.get(str(gid), -1) if gid else 0
        return out

    async def _grants_ended(self, gids: list[str]) -> dict[str, int | None]:
        """Grant id -> when it ended (expired or revoked), None while it may still pass."""
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            pipe.hmget(keys.grant_keys(gid)[0], ["expires_at", "revoked_at"])
        out: dict[str, int | None] = {}
        now = self.clock()
        for gid, (expires, revoked) in zip(gids, await pipe.execute(), strict=True):
            end = int(revoked) if revoked else int(expires) if expires else 0
            out[gid] = end if end <= now else None
        return out

    def _problem(self, rec: dict[str, Any], cutoff: int) -> str | None:
        """None: leaves now; "": not yet; else why its history must stay to be looked at."""
        h, lines = rec["fields"], rec["audit"]
        if h.get("state") not in _FINAL:
            return ""
        last, grant_end = _at(lines[-1]), rec.pop("_grant_end", 0)
        if last is None:
            return "its last audit entry has no time"
        if grant_end is None or max(last, grant_end) >= cutoff:
            return ""
        broken = verify(list(lines), h.get("audit_head", ""))
        if broken is not None:
            return f"entry {broken.seq}: {broken.why}"
        for seq, why in unsealed(rec["id"], lines, self.trusted):
            return f"entry {seq}: {why}"
        version = h.get("version", "")
        for b in order_problems(lines, int(version) if version.isdigit() else None):
            return f"entry {b.seq}: {b.why}"
        return None

    async def _runs(self, cutoff: int, now: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        start = 0
        for _ in range(PAGES):  # past live runs at the head: they cannot stall the rest
            ids = cast(
                list[str],
                await self.redis.zrangebyscore(keys.RUNS_ALL, 0, cutoff, start, BATCH),
            )
            if not ids:
                break
            start += len(ids)
            out += await self._read_runs(ids, cutoff, now)
            if len(out) >= BATCH:
                break
        return out[:BATCH]  # the rest: the next pass

    async def _read_runs(self, ids: list[str], cutoff: int, now: int) -> list[dict[str, Any]]:
        pipe = self.redis.pipeline(transaction=False)
        for run_id in ids:
            pipe.hgetall(keys.run(run_id))
            pipe.pttl(keys.run(run_id))
            pipe.lrange(keys.run_audit(run_id), 0, -1)
            pipe.zrange(keys.run_questions(run_id), 0, -1)
        got = await pipe.execute()
        out: list[dict[str, Any]] = []
        for i, run_id in enumerate(ids):
            h, ttl, lines, qids = got[4 * i : 4 * i + 4]
            if not h:
                await run_left(self.redis, run_id, "")  # expired by itself: only the index
                continue
            ended = h.get("state") in _RUN_FINAL and int(h.get("updated_at") or now) < cutoff
            idle = 0 < int(ttl) < RUN_TTL_MARGIN_MS
            if not (ended or idle):
                continue
            questions = await self._questions(list(qids))
            out.append(
                {"kind": "run", "id": run_id, "fields": h, "audit": lines, "questions": questions}
            )
        return out

    async def _questions(self, qids: list[str]) -> list[dict[str, str]]:
        pipe = self.redis.pipeline(transaction=False)
        for qid in qids:
            pipe.hgetall(keys.question(qid))
        return [h for h in await pipe.execute() if h]

    async def _drop(self, records: list[dict[str, Any]]) -> tuple[int, int, int]:
        n_req = n_run = n_q = 0
        for rec in records:
            if rec.get("kind") == "request":
                n_req += await self._drop_one_request(rec)
            elif rec.get("kind") == "run":
                gone, nq = await self._drop_one_run(rec)
                n_run += gone
                n_q += nq
            elif rec.get("kind") == "question":
                n_q += await loose.drop(self.redis, rec)
        return n_req, n_run, n_q

    async def _drop_one_request(self, rec: dict[str, Any]) -> int:
        rid = str(rec["id"])
        head = line_hash(rec["audit"][-1])
        s = keys.shard_of(rid)
        k = [
            keys.request(rid),
            keys.audit(rid),
            keys.every(s),
            keys.posts(rid),
            keys.open_views(rid),
            keys.wake(rid),
        ]
        gone = int(await self._drop_request(keys=k, args=[rid, head]))
        run_id = rec["fields"].get("run_id")
        if gone and run_id:  # the run's own slot: a step of its own
            await self.redis.zrem(keys.run_requests(run_id), rid)
        return gone

    async def _drop_one_run(self, rec: dict[str, Any]) -> tuple[int, int]:
        run_id = str(rec["id"])
        h = rec["fields"]
        args = [h.get("updated_at", ""), len(rec["audit"])]
        gone = int(await self._drop_run(keys=_run_slot_keys(run_id), args=args))
        if not gone:
            return 0, 0
        n_q = 0
        for q in rec["questions"]:
            qid = q.get("id", "")
            if qid:
                n_q += int(await self.redis.delete(keys.question(qid), keys.wake(qid)) > 0)
        if h.get("channel") and h.get("thread_ts"):
            await self.redis.delete(keys.thread(h["channel"], h["thread_ts"]))
        await run_left(self.redis, run_id, h.get("requester", ""))
        return 1, n_q


def _at(line: str) -> int | None:
    try:
        return int(json.loads(line)["at"])
    except (ValueError, KeyError, TypeError):
        return None
