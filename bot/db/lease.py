"""A short lease on one key, kept alive while its holder works.

A lease that simply expires after the longest a piece of work could ever take makes a
dead holder's work wait that long before anyone else may pick it up. Renewing a short
lease on a beat bounds that wait to the lease itself, while a live holder keeps it for
as long as the work takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

# Keep a lease alive only while it is still ours: KEYS[1] the lease, ARGV[1] the holder,
# ARGV[2] seconds. 1 if renewed, 0 if it expired or another holder took it meanwhile.
RENEW_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0
"""

# Give a lease back only while it is still ours: KEYS[1] the lease, ARGV[1] the holder.
# A plain DEL after the lease expired would delete the next holder's, and a third
# process could then take it and deliver the same message twice. 1 if released, else 0.
RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# Keep a lease (still ours) for exactly ARGV[2] ms more, then let it go by itself: a
# notice Slack refused is left alone until its backoff ends, by every process.
HOLD_LEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
end
return 0
"""


class Lease:
    def __init__(self, redis: Redis, key: str, holder: str, seconds: int) -> None:
        self.redis = redis
        self.key = key
        self.holder = holder
        self.seconds = seconds
        self._renew = redis.register_script(RENEW_LEASE)
        self._release = redis.register_script(RELEASE_LEASE)
        self._hold = redis.register_script(HOLD_LEASE)

    async def take(self) -> bool:
        return bool(await self.redis.set(self.key, self.holder, nx=True, ex=self.seconds))

    async def release(self) -> bool:
        """Give the lease back if it is still ours; False when it expired or another
        holder has it (theirs is left alone), or Redis is down (it expires by itself)."""
        with contextlib.suppress(RedisError):
            return bool(await self._release(keys=[self.key], args=[self.holder]))
        return False

    async def hold(self, ms: int) -> None:
        """Keep the lease for `ms` more and no longer (call it after `kept()` ends): no
        one may take it meanwhile. With Redis down it expires by itself anyway."""
        with contextlib.suppress(RedisError):
            await self._hold(keys=[self.key], args=[self.holder, max(1, ms)])

    @contextlib.asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """Renew the (taken) lease every third of its length until the block ends."""
        beat = asyncio.create_task(self._beat())
        try:
            yield
        finally:
            beat.cancel()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.seconds / 3)
            try:
                if not await self._renew(keys=[self.key], args=[self.holder, self.seconds]):
                    log.warning("lost the lease %s: someone else may do the work too", self.key)
                    return
            except RedisError as exc:  # the next beat tries again
                log.warning("cannot renew the lease %s: %s", self.key, exc)
