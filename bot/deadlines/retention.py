"""Retention on a schedule: serve runs a pass every HITL_RETENTION_CHECK_S, under a
lease so two serve processes never write the archive at once (bot/store/retire.py
fences them anyway: the second one's segment would not join the chain).

A pass that cannot write the archive (a full disk, a read-only mount) removes nothing
and says so in the log at error level: records stay in the live store until the
archive can take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket

from bot import messages as msg
from bot.db.failures import StoreError
from bot.db.lease import Lease
from bot.store import keys
from bot.store.retire import Retention
from bot.store.run.runs import RUN_TTL_S

log = logging.getLogger(__name__)

LEASE_S = 60
MAX_PASSES = 50  # segments per check: a backlog drains over a few checks, not one


class Retainer:
    def __init__(self, retention: Retention, keep_ms: int) -> None:
        self.retention = retention
        self.keep_ms = keep_ms
        holder = f"{socket.gethostname()}-{os.getpid()}"
        self.lease = Lease(retention.redis, keys.RETENTION_LEASE, holder, LEASE_S)

    async def check(self) -> int:
        """Passes until nothing is left to retire (or MAX_PASSES); records retired."""
        ttl_ms = RUN_TTL_S * 1000
        if not await self.retention.due(self.keep_ms, ttl_ms) or not await self.lease.take():
            return 0
        done = 0
        try:
            async with self.lease.kept():
                for _ in range(MAX_PASSES):
                    got = await self.retention.pass_once(self.keep_ms, ttl_ms)
                    if got.segment is None:
                        break
                    done += got.requests + got.runs
        finally:
            await self.lease.release()
        return done

    async def run(self, stop: asyncio.Event, every_s: float) -> None:
        while not stop.is_set():
            try:
                await self.check()
            except OSError as exc:
                log.error(msg.ARCHIVE_UNWRITABLE.format(path=self.retention.directory, error=exc))
            except StoreError as exc:  # the next check tries again
                log.warning("retention pass stopped: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every_s)
