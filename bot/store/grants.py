"""Standing approvals in Redis: make, list, use, give back and revoke grants.

Whether a call falls inside a grant is bot/core/grants.py's to say; here each grant's
liveness (expiry, uses left, revocation) is checked and its use counted in one script
(scripts/grant.lua), and every change is appended to the grant's own audit. A request
passed under a grant is approved through the request store like any person's
decision (bot/gate/grant_pass.py), so it is sealed in the same script as its move.

Only `serve` makes grants: `make` signs the record with its key, and `problem` says
whether a stored grant may pass anything (its seal, and its source request approved by
its granter): a grant written into Redis by any other process passes nothing.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, cast

from redis.asyncio import Redis

from bot import messages as msg
from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.grants import Grant, encode_grant_seal, grant_bytes, grant_problem
from bot.core.proof.seal import Verify
from bot.db.replicas import acks_for
from bot.errors import ConfigError, NotFound
from bot.signing import Signer
from bot.store import audit, keys
from bot.store.scripts import GRANT

log = logging.getLogger(__name__)

KEEP_MS = 30 * 86_400_000  # the set of requests a grant passed outlives its expiry this long
CHECKED_MAX = 1_000  # grant records whose check is remembered in this process


@dataclass(frozen=True)
class Held:
    """A grant as stored now: what is left of it, and who revoked it."""

    grant: Grant
    left: int
    revoked_by: str | None
    revoked_at: int | None

    def live(self, now: int) -> bool:
        return self.revoked_by is None and now < self.grant.expires_at and self.left > 0


def _held_or_none(gid: str, h: dict[str, str]) -> Held | None:
    """A stored grant, or None (logged) for a record that does not read as one: a record
    written by hand, or under an older format, must not stop every other grant."""
    try:
        return _held(h)
    except (KeyError, ValueError) as exc:
        log.error("unreadable grant", extra={"grant": gid, "why": type(exc).__name__})
        return None


def _held(h: dict[str, str]) -> Held:
    return Held(
        grant=Grant.model_validate_json(h["json"]),
        left=int(h["left"]),
        revoked_by=h.get("revoked_by") or None,
        revoked_at=int(h["revoked_at"]) if h.get("revoked_at") else None,
    )


class GrantStore:
    def __init__(
        self,
        redis: Redis,
        *,
        clock: Clock = wall_ms,
        ids: IdFactory = new_id,
        signer: Signer | None = None,
    ) -> None:
        """`signer`: serve's key. Without it grants can be read and revoked, never made."""
        self.redis = redis
        self.clock = clock
        self.ids = ids
        self.signer = signer
        self._script = redis.register_script(GRANT)
        self._acks = acks_for(redis)
        # A record's check, by its exact JSON: a grant cannot change once made, and one
        # rewritten in the store is a new string, checked afresh.
        self._checked: dict[str, str | None] = {}

    def new_id(self) -> str:
        return f"G{self.ids()}"

    async def _run(self, op: str, gid: str, actor: str, arg: str, *extra: str | int) -> list[Any]:
        argv: list[str | int] = [op, self.clock(), gid, actor, arg, KEEP_MS, *extra]
        out = await self._acks.script(self._script, keys=keys.grant_keys(gid), args=argv)
        return [v.decode() if isinstance(v, bytes) else v for v in cast(list[Any], out)]

    def seal(self, grant: Grant) -> Grant:
        """`grant` signed with serve's key. ConfigError without one: only serve makes grants."""
        if self.signer is None:
            raise ConfigError(msg.GRANT_NEEDS_KEY)
        kid = self.signer.key_id
        return grant.model_copy(
            update={"seal": encode_grant_seal(kid, self.signer.sign(grant_bytes(grant, kid)))}
        )

    async def make(self, grant: Grant) -> Grant:
        """Store a new grant, signed and audited as made by its granter."""
        grant = self.seal(grant)
        await self._run(
            "make",
            grant.id,
            grant.granted_by,
            grant.model_dump_json(),
            grant.uses,
            grant.expires_at,
            grant.source,
        )
        return grant

    async def problem(self, held: Held) -> str | None:
        """Why nothing may pass under `held`, or None: checked against serve's own key
        (a grant made under a key since rotated away passes nothing: fail closed)."""
        if self.signer is None:
            return msg.GRANT_NEEDS_KEY
        raw = held.grant.model_dump_json()
        if raw in self._checked:
            return self._checked[raw]
        found = await self.check(held, self.signer.public().verify)
        if len(self._checked) >= CHECKED_MAX:
            self._checked.clear()
        self._checked[raw] = found
        return found

    async def check(self, held: Held, verify: Verify) -> str | None:
        """`held` against the keys `verify` trusts: its seal, and its source request's
        approval by the granter (one read of that request's audit). Not remembered:
        `problem` keeps serve's answers, `audit verify` asks with the executors' keys."""
        lines = await audit.lines(self.redis, held.grant.source)
        return grant_problem(held.grant, lines, verify)

    async def get(self, gid: str) -> Held:
        h = cast(dict[str, str], await self.redis.hgetall(keys.grant_keys(gid)[0]))
        if not h:
            raise NotFound(msg.UNKNOWN_GRANT.format(id=gid))
        return _held(h)

    async def live(self) -> list[Held]:
        """Every grant neither expired nor revoked, soonest to end first (some may have
        no uses left)."""
        index = keys.grant_keys("")[3]
        gids = cast(list[str], await self.redis.zrangebyscore(index, f"({self.clock()}", "+inf"))
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            pipe.hgetall(keys.grant_keys(gid)[0])
        found = cast(list[dict[str, str]], await pipe.execute())
        out: list[Held] = []
        for gid, h in zip(gids, found, strict=True):
            held = _held_or_none(gid, h) if h else None
            # A signed record copied under another id would count that id's uses.
            if held is not None and held.grant.id == gid:
                out.append(held)
        return out

    async def made_on(self, rid: str) -> Held | None:
        """The grant made when request `rid` was approved, if any."""
        gid = await self.redis.hget(keys.grant_keys("")[4], rid)
        if gid is None:
            return None
        try:
            return await self.get(str(gid))
        except NotFound:  # its record outlived: the index entry did not
            return None

    async def use(self, gid: str, rid: str, actor: str) -> str:
        """Take one use of the grant for request `rid`: 'ok', 'again' (taken for it
        before), or why not: 'gone', 'revoked', 'expired', 'used_up'."""
        return str((await self._run("use", gid, actor, rid))[0])

    async def give_back(self, gid: str, rid: str, why: str) -> None:
        """Return the use taken for `rid`: the request could not be approved after all."""
        await self._run("give_back", gid, "system", rid, why)

    async def revoke(self, gid: str, actor: str) -> tuple[str, str]:
        """('ok', actor), ('already', who revoked it first) or ('gone', '')."""
        out = await self._run("revoke", gid, actor, "")
        return str(out[0]), str(out[1]) if len(out) > 1 else ""

    async def audit(self, gid: str) -> list[dict[str, Any]]:
        raw = cast(list[str], await self.redis.lrange(keys.grant_keys(gid)[2], 0, -1))
        return [json.loads(line) for line in raw]
