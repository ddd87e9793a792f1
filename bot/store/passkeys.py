"""Passkeys in Redis: each Slack user's enrolled WebAuthn credentials, the one-time links
of an enrollment and of a step-up confirmation, and the audit of a refused step-up.

A link is used once: the first `take` sets its `used` mark (SET NX, one key, atomic), so
a second use of it, or of an assertion made for it, is told apart from an unknown or
expired one. A credential removed by its owner or revoked by an operator is remembered
as revoked, so a later assertion with it is refused as revoked, not as unknown.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict
from redis.asyncio import Redis

from bot.clock import Clock, wall_ms
from bot.core.stepup import KEEP_MS, LINK_TTL_MS, Binding
from bot.store import keys
from bot.store.scripts import STEP_UP

Kind = Literal["enroll", "step"]


class Credential(BaseModel):
    """One enrolled passkey: what verifies its assertions, and since when."""

    model_config = ConfigDict(frozen=True)

    id: str  # the credential id, urlsafe base64 without padding
    user: str  # the Slack user id it belongs to
    public_key: str  # urlsafe base64 of its COSE public key
    sign_count: int = 0
    created_at: int
    last_used_at: int | None = None


class Enrollment(BaseModel):
    model_config = ConfigDict(frozen=True)

    user: str
    challenge: str  # urlsafe base64
    expires_at: int
    token: str = ""


@dataclass(frozen=True)
class Taken:
    """A link taken for use: its record, or None (unknown, or kept past KEEP_MS), and
    whether it had been used already."""

    record: str | None
    replayed: bool = False


class PasskeyStore:
    def __init__(self, redis: Redis, *, clock: Clock = wall_ms) -> None:
        self.redis = redis
        self.clock = clock
        self._refused = redis.register_script(STEP_UP)

    # -- one-time links ------------------------------------------------------------

    async def _issue(self, kind: Kind, record: str, ttl_ms: int) -> str:
        token = secrets.token_urlsafe(16)  # 128 bits, short enough for a modal's error
        await self.redis.set(keys.passkey_link(kind, token), record, px=max(ttl_ms, 1))
        return token

    async def _peek(self, kind: Kind, token: str) -> Taken:
        raw = await self.redis.get(keys.passkey_link(kind, token))
        used = await self.redis.exists(keys.passkey_link(kind, token) + ":used")
        return Taken(raw.decode() if isinstance(raw, bytes) else raw, replayed=bool(used))

    async def _take(self, kind: Kind, token: str) -> Taken:
        key = keys.passkey_link(kind, token)
        first = await self.redis.set(key + ":used", "1", nx=True, px=KEEP_MS)
        raw = await self.redis.get(key)
        return Taken(raw.decode() if isinstance(raw, bytes) else raw, replayed=not first)

    async def issue_enrollment(self, user: str) -> Enrollment:
        now = self.clock()
        challenge = secrets.token_urlsafe(32)
        e = Enrollment(user=user, challenge=challenge, expires_at=now + LINK_TTL_MS)
        token = await self._issue("enroll", e.model_dump_json(), LINK_TTL_MS)
        return e.model_copy(update={"token": token})

    async def enrollment(self, token: str, *, take: bool = False) -> tuple[Enrollment | None, bool]:
        """The enrollment of `token`, and whether it was used already. `take`: use it."""
        got = await (self._take if take else self._peek)("enroll", token)
        if got.record is None:
            return None, got.replayed
        e = Enrollment.model_validate_json(got.record).model_copy(update={"token": token})
        return e, got.replayed

    async def issue_step_up(self, binding: Binding) -> Binding:
        # Kept past its expiry (KEEP_MS), so a late use is refused as expired and audited
        # against its request, not answered "unknown link".
        ttl = binding.expires_at - self.clock() + KEEP_MS
        token = await self._issue("step", binding.model_dump_json(), ttl)
        return binding.model_copy(update={"token": token})

    async def step_up(self, token: str, *, take: bool = False) -> tuple[Binding | None, bool]:
        """The confirmation of `token`, and whether it was used already. `take`: use it."""
        got = await (self._take if take else self._peek)("step", token)
        if got.record is None:
            return None, got.replayed
        b = Binding.model_validate_json(got.record).model_copy(update={"token": token})
        return b, got.replayed

    # -- credentials ---------------------------------------------------------------

    async def add(self, cred: Credential) -> None:
        await self.redis.hset(keys.passkey_user(cred.user), cred.id, cred.model_dump_json())
        await self.redis.hset(keys.PASSKEY_OWNERS, cred.id, cred.user)
        await self.redis.hdel(keys.PASSKEY_REVOKED, cred.id)
        await self.redis.sadd(keys.PASSKEY_USERS, cred.user)

    async def of(self, user: str) -> list[Credential]:
        raw = await self.redis.hgetall(keys.passkey_user(user))
        creds = [Credential.model_validate_json(v) for v in raw.values()]
        return sorted(creds, key=lambda c: c.created_at)

    async def get(self, user: str, cred_id: str) -> Credential | None:
        raw = await self.redis.hget(keys.passkey_user(user), cred_id)
        return Credential.model_validate_json(raw) if raw else None

    async def owner(self, cred_id: str) -> str | None:
        raw = await self.redis.hget(keys.PASSKEY_OWNERS, cred_id)
        return raw.decode() if isinstance(raw, bytes) else raw

    async def revoked(self, cred_id: str) -> bool:
        return bool(await self.redis.hexists(keys.PASSKEY_REVOKED, cred_id))

    async def used(self, cred: Credential, sign_count: int) -> None:
        """Record an assertion's signature counter (a clone shows as a counter going back)."""
        now = self.clock()
        done = cred.model_copy(update={"sign_count": sign_count, "last_used_at": now})
        await self.redis.hset(keys.passkey_user(cred.user), cred.id, done.model_dump_json())

    async def remove(self, user: str, cred_id: str | None, *, by: str) -> list[str]:
        """Remove `user`'s credential `cred_id` (None: all of theirs); the ids removed."""
        gone = [c.id for c in await self.of(user) if cred_id is None or c.id == cred_id]
        if gone:
            await self.redis.hdel(keys.passkey_user(user), *gone)
            mark = json.dumps({"user": user, "by": by, "at": self.clock()})
            await self.redis.hset(keys.PASSKEY_REVOKED, mapping=dict.fromkeys(gone, mark))
        return gone

    async def users(self) -> list[str]:
        raw = await self.redis.smembers(keys.PASSKEY_USERS)
        return sorted(v.decode() if isinstance(v, bytes) else v for v in raw)

    # -- audit ---------------------------------------------------------------------

    async def audit_refused(
        self, rid: str, *, actor: str, event: str, code: str, seen: str = "", via: str = ""
    ) -> bool:
        """Add a refused step-up to the request's audit (False: no such request)."""
        done = await self._refused(
            keys=[keys.request(rid), keys.audit(rid)],
            args=[self.clock(), actor, event, code, via, seen],
        )
        return bool(done)
