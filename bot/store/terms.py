"""Review terms by reference: reading a request's copy back, and the scripts' refusals.

A request stores the name of its review terms (bot/store/codec.py TERMS); the copy is
kept once per shard under that name, the hash of its content. A request is read with
its own shard's copy, the one its scripts use, so a read and a decision agree. Copies
are never rewritten, so a process keeps each one it read and checked.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from bot import messages as msg
from bot.errors import StoreDamaged
from bot.store import keys
from bot.store.codec import REF, ref_of, with_terms
from bot.store.scripts.common import TERMS_ERROR

CACHE = 1024  # copies kept per store
log = logging.getLogger(__name__)


class Terms:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._copies: dict[tuple[int, str], str] = {}  # (shard, name) -> copy

    async def fill(
        self, hashes: list[dict[str, str]], *, skip_damaged: bool = False
    ) -> list[dict[str, str]]:
        """Each hash with its review terms filled in from its own shard's copy, checked
        against its name. A request whose copy is gone or damaged raises StoreDamaged,
        or with `skip_damaged` is left out (and logged), so one cannot hide the rest."""
        where = {h["id"]: (keys.shard_of(h["id"]), h.get(REF, "")) for h in hashes}
        known = {at: self._copies.get(at) for at in where.values()}
        wanted = [at for at, copy in known.items() if copy is None]
        if wanted:
            pipe = self.redis.pipeline(transaction=False)
            for shard, ref in wanted:
                pipe.hget(keys.terms(shard), ref)
            for at, got in zip(wanted, await pipe.execute(), strict=True):
                if got is not None and ref_of(got) == at[1]:
                    known[at] = got
            if len(self._copies) + len(wanted) > CACHE:
                self._copies.clear()
            self._copies.update({at: t for at, t in known.items() if t is not None})
        out = []
        for h in hashes:
            if (copy := known[where[h["id"]]]) is not None:
                out.append(with_terms(h, copy))
            elif skip_damaged:
                log.error("store damaged", extra={"request_id": h["id"], "terms": h.get(REF)})
            else:
                raise StoreDamaged(msg.TERMS_DAMAGED.format(id=h["id"]))
        return out


@contextlib.contextmanager
def terms_checked(rid: str) -> Iterator[None]:
    """The scripts' refusal to let a person decide or an executor claim a request whose
    terms are gone or damaged (or to create one whose terms differ from the stored copy),
    as the error a read raises."""
    try:
        yield
    except ResponseError as exc:
        if TERMS_ERROR not in str(exc):
            raise
        raise StoreDamaged(msg.TERMS_DAMAGED.format(id=rid)) from exc
