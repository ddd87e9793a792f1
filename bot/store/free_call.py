"""A free call's create, written to the store without waiting for its reply.

A call the policy exempts from review is created already claimed (CREATE with a
claimer). The executor need not wait for that reply before running the tool: what the
script will store is known (`RequestStore.prepare`), the claim's fence included. So the
command is written to the socket first, the tool runs while the server applies it, and
the reply is read before the outcome is reported: the outcome's round trip is the only
one the call waits on.

What holds, and its bound: the create reaches the kernel's socket before the tool
starts, so a crash of this process mid-call still lands it (the kernel sends what was
written) and the sweeper ends the claim in `manual_intervention`; the outcome is stored
before the result goes back. What it gives up: the record is in the store about half a
round trip after the tool started instead of before. If the store refuses or loses the
create in that window (it went down, the script was flushed and must be loaded again),
the tool has run: the reply is checked before the report, and a create that did not
claim as sent raises `UnconfirmedCreate` (the run fails), so the result never goes
back unrecorded.

Not used with replica acks (HITL_REPLICA_ACKS): there the create must be acknowledged
by replicas before the tool runs. Not on a cluster (the gate asks the store there).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from redis.exceptions import ConnectionError, NoScriptError, ResponseError

from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.states import Event, State
from bot.db.cluster import is_cluster
from bot.errors import UnconfirmedCreate
from bot.store import keys
from bot.store.codec import reply
from bot.store.creating import Prepared
from bot.store.keys import REQUEST_KEYS
from bot.store.replies import Reply
from bot.store.requests import RequestStore
from bot.store.run.run_signals import RunSignals
from bot.store.terms import terms_checked
from bot.store.transition_argv import Signed, argv_of, log_moved

__all__ = ["SentCreate", "UnconfirmedCreate", "fits", "send_claimed"]


class SentCreate:
    """A create and claim written to `conn`, its reply not read yet; `conn` stays this
    call's until `confirmed` or `succeeded` has read it."""

    def __init__(
        self, store: RequestStore, prep: Prepared, pool: Any, conn: Any, request: ActionRequest
    ) -> None:
        self.store, self.prep, self._pool, self._conn = store, prep, pool, conn
        self.request = request  # as the script stores it: claimed, with its fence
        self._made: ActionRequest | None = None
        self.run_clear: bool | None = None  # see `succeeded`
        # Two coroutines may settle the same create (a cancelled caller's cleanup beside
        # its report): one reads the connection, the other waits for what it read.
        self._reading = asyncio.Lock()

    async def confirmed(self) -> ActionRequest:
        """The stored request, once the store confirms the claim this call ran under."""
        async with self._reading:
            if self._made is None:
                try:
                    got = await self._read(1)
                    self._made = await self._settle(got[0])
                finally:
                    await self._release()
        return self._made

    async def succeeded(
        self,
        detail: str | None,
        run_id: str | None = None,
        *,
        actor: str = SYSTEM,
        signals: RunSignals | None = None,
    ) -> bool:
        """Report success pipelined behind the create, reading both replies: one round
        trip. False: the create is confirmed but the report did not take (the caller
        reports as usual, which explains a refusal). `actor`: who the audit line names.

        `run_id`: the run's correction queue and stop flag are read in the same round
        trip, right after the report: `run_clear` says whether both were empty then, so
        a correction queued while the tool ran is never missed by the next call.
        `signals`: the process's follower of the run, told what that read found, so the
        next call skips the store only while the run stays clear."""
        mark = None if signals is None or run_id is None else signals.mark(run_id)
        async with self._reading:
            took = await self._succeeded(detail, run_id, actor)
        if signals is not None and run_id is not None and self.run_clear is not None:
            if self.run_clear:
                signals.found_clear(run_id, mark)
            else:
                signals.dirty(run_id)
        return took

    async def _succeeded(self, detail: str | None, run_id: str | None, actor: str) -> bool:
        if self._made is not None:
            return False
        run_reads: list[tuple[Any, ...]] = []
        if run_id is not None:
            stop = ("HGET", keys.run(run_id), "stop_requested")
            run_reads = [("LLEN", keys.steering(run_id)), stop]
        d = Decision(event=Event.SUCCEED, actor=actor, detail=detail)
        d = d.model_copy(update={"claim_fence": self.request.fence})
        argv = argv_of(d, self.store.clock(), Signed(), lean=True)
        script, rkeys = self.store.report_script, self.prep.keys[: len(REQUEST_KEYS)]
        try:
            try:
                commands = [("EVALSHA", script.sha, len(rkeys), *rkeys, *argv), *run_reads]
                await self._conn.send_packed_command(self._conn.pack_commands(commands))
            except Exception:
                got = await self._read(1)  # the create's reply may still be readable
                self._made = await self._settle(got[0])
                return False
            got = await self._read(2 + len(run_reads))
            self._made = await self._settle(got[0])
        finally:
            await self._release()
        if run_reads:
            queued, stop = got[2], got[3]
            self.run_clear = queued == 0 and stop not in ("1", b"1")
        report = got[1]
        if not isinstance(report, list) or str(report[0]) != Reply.OK:
            return False
        log_moved(self.request.id, d, reply(report[1]), report[2:])
        return True

    async def _read(self, n: int) -> list[Any]:
        """n replies in order; an error reply in its place; a broken link raises."""
        out: list[Any] = []
        for _ in range(n):
            try:
                out.append(await self._conn.read_response())
            except ResponseError as exc:
                out.append(exc)
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    await self._conn.disconnect()
                raise UnconfirmedCreate(f"request {self.request.id}: {exc}") from exc
        return out

    async def _settle(self, got: Any) -> ActionRequest:
        try:
            return self._check(got)
        except _Reload:  # load it and send the same create again (same claim token)
            return self._check(await self.store.create_again(self.prep))

    def _check(self, got: Any) -> ActionRequest:
        if isinstance(got, NoScriptError):
            raise _Reload
        if isinstance(got, Exception):
            raise UnconfirmedCreate(f"request {self.request.id}: {got}")
        with terms_checked(self.request.id):
            made = self.store.finish(self.prep, str(got[0]), got[1])
        if not made.claimed or made.request.fence != self.request.fence:
            raise UnconfirmedCreate(f"request {self.request.id} is {made.request.state.value}")
        return made.request

    async def _release(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await self._pool.release(conn)


class _Reload(Exception):
    """The script was not loaded (a flushed or restarted server)."""


def fits(store: RequestStore) -> bool:
    """Whether this store may send a create without waiting for it: one Redis, no replica
    acks, and the create script known to be loaded there (`create_loaded`)."""
    return store.create_loaded and not is_cluster(store.redis) and store.acks_needed == 0


async def send_claimed(store: RequestStore, prep: Prepared) -> SentCreate | None:
    """Write `prep`'s create and claim; None when it needs review or the store does not fit
    (the caller then creates as usual)."""
    if prep.claim_as is None or prep.needs_review or not fits(store):
        return None
    pool = store.redis.connection_pool
    try:
        conn = await pool.get_connection()  # type: ignore[no-untyped-call]
    except (ConnectionError, OSError):
        return None  # no connection to spare: the usual path waits for one
    # A connection that connects again has found a server that may have lost the script
    # (a restart): the usual path then loads it before a tool runs.
    conn.register_connect_callback(store.reconnected)
    if not store.create_loaded:
        await pool.release(conn)
        return None
    try:
        sha = store.create_script.sha
        await conn.send_command("EVALSHA", sha, len(prep.keys), *prep.keys, *prep.argv)
    except BaseException:
        await pool.release(conn)
        raise
    v = prep.request.version + 1
    claimed = prep.request.model_copy(
        update={"state": State.EXECUTING, "version": v, "fence": f"{v}.{prep.token}"}
    )
    return SentCreate(store, prep, pool, conn, claimed)
