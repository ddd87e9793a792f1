"""Approval requests in Redis: create, read, list, and transition in one round trip."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, NoReturn, Unpack, cast

from redis.asyncio import Redis

from bot import messages as msg
from bot.clock import Clock, IdFactory, new_id, wall_ms
from bot.core.args.payload import payload_hash, stored_args
from bot.core.machine import apply
from bot.core.models import ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.states import Event, State
from bot.db.cluster import is_cluster, run_many
from bot.db.replicas import acks_for
from bot.errors import (
    ForgedDecision,
    InvalidTransition,
    NotFound,
    StoreDamaged,
)
from bot.signing import Signer
from bot.signing import messages as sign_msg
from bot.store import keys, tools
from bot.store.codec import WATCHED, from_hash, reply
from bot.store.creating import Created, CreateOptions, Creating
from bot.store.replies import Reply
from bot.store.run import run_requests
from bot.store.scripts import CREATE, TRANSITION_SCRIPTS, WITH_AUDIT, script_for
from bot.store.terms import Terms, terms_checked
from bot.store.transition_argv import (
    Signed,
    argv_of,
    log_moved,
    log_refused,
    predicted_state,
    sealed,
    timeout_seals,
)
from bot.store.waiting import wait_until

CLUSTER_IN_FLIGHT = 16  # timeout scripts one store sends at once to a cluster
MOVED_RETRIES = 5  # a signed decision is signed again this often if the request moves
# What serve signs: a person's decisions and the timeouts that may apply a default.
SEALED = frozenset({Event.APPROVE, Event.EDIT_AND_APPROVE, Event.REJECT, Event.TIMEOUT})


@dataclass(frozen=True)
class Moved:
    request: ActionRequest
    repeat: bool = False  # the same person repeated a recorded decision
    noop: bool = False  # a stale or early timer
    left: bool = False  # a default a store without the key leaves to serve's (timer kept)


class RequestStore(Creating):
    """`signer`: serve's key (only serve passes one). With it every person's decision, every
    policy default and every policy exemption is sealed (bot/core/proof/seal.py) in the same
    script that writes it; without it they are written unsealed, which no executor claims,
    and a timeout that would auto-approve is left for a store with the key (serve's
    sweeper) instead: an unsigned auto-approval would be refused by every executor."""

    def __init__(
        self,
        redis: Redis,
        *,
        clock: Clock = wall_ms,
        ids: IdFactory = new_id,
        signer: Signer | None = None,
        shadow: Policy | None = None,
    ) -> None:
        self.redis = redis
        self.signer = signer
        # HITL_SHADOW_POLICY: every create is judged by it too, never enforced; its
        # verdict is stored on the request (bot/store/figures/shadow.py).
        self.shadow = shadow
        self.clock = clock
        self.ids = ids
        self._create = redis.register_script(CREATE)
        # The create script has run on this server through the usual path, which loads it:
        # only then is a create sent unawaited (bot/store/free_call.py), so a NOSCRIPT
        # cannot leave a fresh process's first free call unrecorded while it runs.
        self.create_loaded = False
        self._scripts = {name: redis.register_script(s) for name, s in TRANSITION_SCRIPTS.items()}
        self._with_audit = redis.register_script(WITH_AUDIT)
        self._in_flight = asyncio.Semaphore(CLUSTER_IN_FLIGHT)
        self._acks = acks_for(redis)  # HITL_REPLICA_ACKS, as connect() found it
        self._schemas = tools.SchemaCache(redis)
        self._terms = Terms(redis)
        # A run's keys share no hash slot with a request's, so on a cluster a caller
        # checks its run's corrections itself, in a round trip of its own.
        self.guards_steering = not is_cluster(redis)

    async def create(
        self,
        policy: Policy,
        *,
        tool: str,
        args: dict[str, Any],
        requester: str,
        **options: Unpack[CreateOptions],
    ) -> Created:
        """Create the request (or find it again by `idempotency_key`).

        `args_schema`: the JSON Schema of the tool's arguments. The proposed arguments
        must fit it (PayloadError), and it is recorded for (`requester`, `tool`) before
        the request exists, so the Edit modal can check a person's edit against it.
        `schema_by_worker`: the worker registering its own tool; a schema a worker holds
        is never replaced by one sent without it (PayloadError).

        `claim_as`: an executor's name. A new request the policy exempts from review is
        then claimed by it in the same round trip (`Created.claimed`), audited as a claim
        would be; a request that needs review, or an existing one, is left as it is.
        `claim_token`: its claim token (bot/core/proof/fence.py; None: the store's).

        `unless_steered`: a run id (only where `guards_steering`). If the run has a
        correction queued or a stop asked, nothing is created (`Created.steered`), in the
        same atomic step as the create, so the caller need not look first; a request
        that waits for review joins the run's waiting set (`keys.run_waiting`).

        `owner`: the identity whose work it is (the requester when not given); the
        idempotency key is scoped to it.

        `candidates` (with empty `args`): a proposal a person chooses one call from
        (bot/core/candidates.py), reviewed at the highest tier any candidate reaches;
        with `args_schema` every candidate must fit it.
        """
        prep = await self.prepare(policy, tool=tool, args=args, requester=requester, **options)
        with terms_checked(prep.request.id):
            # The agent is told its request exists (and, with `claim_as`, to run it).
            status, out = await self._acks.script(self._create, keys=prep.keys, args=prep.argv)
        self.create_loaded = True
        return self.finish(prep, status, out)

    async def get(self, rid: str) -> ActionRequest:
        return _parsed(rid, await self.fields(rid))

    async def with_audit(self, rid: str) -> tuple[ActionRequest, list[str]]:
        """The request and its audit lines as one moment saw them: one script (both keys
        share the request's hash tag, so a cluster takes it too). An executor checks the
        one against the other (bot/gate/claims.py): read apart, a claim landing between
        the reads made a version still approved look followed by a claim, a replay."""
        flat, lines = cast(
            tuple[list[str], list[str]],
            await self._with_audit(keys=[keys.request(rid), keys.audit(rid)]),
        )
        h = dict(zip(flat[::2], flat[1::2], strict=True))
        if not h:
            raise NotFound(msg.UNKNOWN_REQUEST.format(id=rid))
        return _parsed(rid, (await self._terms.fill([h]))[0]), list(lines)

    async def get_many(self, rids: list[str]) -> list[ActionRequest | None]:
        """Many requests in one round trip, in order; None for one gone (or damaged)."""
        return await self._read_many(rids)

    async def _read_many(self, rids: list[str]) -> list[ActionRequest | None]:
        """Many requests in one pipeline (None: gone), their review terms filled in."""
        pipe = self.redis.pipeline(transaction=False)
        for rid in rids:
            pipe.hgetall(keys.request(rid))
        got = cast(list[dict[str, str]], await pipe.execute())
        # A request whose terms are damaged is left out (None): its timeout still fires,
        # sealed as nothing claimable, and nothing may run it anyway.
        filled = {
            h["id"]: h for h in await self._terms.fill([h for h in got if h], skip_damaged=True)
        }
        return [from_hash(filled[h["id"]]) if h and h["id"] in filled else None for h in got]

    async def fields(self, rid: str) -> dict[str, str]:
        """The request's hash as stored, its review terms filled in (and any field the bot
        keeps beside it, such as the card's)."""
        h = cast(dict[str, str], await self.redis.hgetall(keys.request(rid)))
        if not h:
            raise NotFound(msg.UNKNOWN_REQUEST.format(id=rid))
        if h.get("id") != rid:  # written by hand, or copied from another request
            why = f"its id field is {h.get('id')!r}"[:200]
            raise StoreDamaged(msg.RECORD_DAMAGED.format(id=rid, why=why))
        return (await self._terms.fill([h]))[0]

    async def from_fields(self, h: dict[str, str]) -> ActionRequest:
        """The request a hash read elsewhere holds (the archive keeps it as stored), its
        review terms filled in from the live store, which keeps every copy."""
        return _parsed(h["id"], (await self._terms.fill([h]))[0])

    async def transition(
        self, rid: str, d: Decision, *, expect_version: int | None = None, forged: str = ""
    ) -> Moved:
        """Apply one decision atomically; raise the same error the pure machine would.

        For an executor's checked claim (bot/gate/claims.py): `expect_version`, the
        version it checked (moved since: `Moved.noop`, nothing done); `forged`, why it
        refuses the decision instead (audited, ForgedDecision raised)."""
        status, h, now = await self._apply(rid, d, lean=False, expect=expect_version, forged=forged)
        req = from_hash(h)
        if status in (Reply.OK, Reply.REPEAT, Reply.NOOP, Reply.MOVED, Reply.UNSIGNED):
            noop = status in (Reply.NOOP, Reply.MOVED, Reply.UNSIGNED)
            return Moved(
                req, repeat=status == Reply.REPEAT, noop=noop, left=status == Reply.UNSIGNED
            )
        if status == Reply.FORGED_DECISION:  # audited as a refused claim: logged as one too
            log_refused(req, d, status)
            raise ForgedDecision(sign_msg.FORGED.format(id=rid, why=forged), state=req.state.value)
        self._refused(req, d, status, now)

    async def advance(self, rid: str, d: Decision) -> State:
        """`transition` for a caller that needs only to know it took (an executor's report):
        the state it moved to. Reading the whole request back would be a third of a free
        call's client CPU. Refusals raise exactly as `transition` does."""
        status, h, now = await self._apply(rid, d, lean=True)
        if status == Reply.OK:
            return State(h["state"])
        req = from_hash(h)
        if status in (Reply.REPEAT, Reply.NOOP, Reply.MOVED, Reply.UNSIGNED):
            return req.state
        self._refused(req, d, status, now)

    async def _apply(
        self, rid: str, d: Decision, *, lean: bool, expect: int | None = None, forged: str = ""
    ) -> tuple[str, dict[str, str], int]:
        name = script_for(d.event)
        if name is None:  # a step only the machine chains: refused as it refuses it
            now = self.clock()
            self._refused(await self.get(rid), d, "invalid", now)
        for _ in range(MOVED_RETRIES):
            now = self.clock()
            argv = await self._argv_for(rid, d, now, expect, lean=lean, forged=forged)
            with terms_checked(rid):
                script = self._scripts[name]
                status, out, *was = await self._acks.script(
                    script, keys=keys.request_keys(rid), args=argv
                )
            # The request moved between the read the seal was made on and the script: sign
            # again (a caller's own expected version is the caller's to handle).
            if status != Reply.MOVED or expect is not None:
                break
        if status == Reply.NOT_FOUND:
            raise NotFound(msg.UNKNOWN_REQUEST.format(id=rid))
        h = reply(out)
        if status == Reply.OK:
            log_moved(rid, d, h, was)
        return str(status), h, now

    async def _argv_for(
        self, rid: str, d: Decision, now: int, expect: int | None, *, lean: bool, forged: str
    ) -> list[str | int]:
        """The script's ARGV: with a signer, the decision sealed at the version it will
        move the request to. Without one, a timeout leaves an auto-approval to serve
        (nobody would claim it unsigned)."""
        new_args = new_hash = ""
        edit = d.event == Event.EDIT_AND_APPROVE and d.new_args is not None
        sealing = self.signer is not None and d.event in SEALED
        if edit or sealing:
            got = await self.redis.hmget(keys.request(rid), ["tool", "version", "payload_hash"])
            tool, version, current = (None if v is None else str(v) for v in got)
            if tool is None or version is None:
                raise NotFound(msg.UNKNOWN_REQUEST.format(id=rid))
            if d.new_args is not None and edit:
                new_args, new_hash = stored_args(d.new_args), payload_hash(tool, d.new_args)
        if self.signer is None or not sealing:
            leave = self.signer is None and d.event == Event.TIMEOUT
            signed = Signed(expect="" if expect is None else str(expect), leave=leave)
        else:
            # The seal names the state the decision leads to: the pure machine, on the
            # request as read, predicts it (the script refuses if the version moved since,
            # and a wrong prediction only makes the seal fail at claim).
            try:
                to = predicted_state(await self.get(rid), d, now)
            except StoreDamaged:  # no terms: sealed as nothing claimable; the script decides
                to = ""
            # A caller's expected version (a digest's click) is the one sealed: moved
            # since, the script answers 'moved' and nothing is decided.
            at = int(version or 0) if expect is None else expect
            signed = sealed(self.signer, rid, d, now, at=at, new_hash=new_hash, read=current, to=to)
        edit_argv = {"new_args": new_args, "new_hash": new_hash}
        return argv_of(d, now, signed, lean=lean, forged=forged, **edit_argv)

    def _refused(self, req: ActionRequest, d: Decision, status: str, now: int) -> NoReturn:
        log_refused(req, d, status)
        # Refused: the pure machine, given the same request, names the reason in words.
        apply(req, d, now)
        raise InvalidTransition(
            msg.NOT_ALLOWED.format(event=d.event.value, state=req.state.value),
            state=req.state.value,
            event=d.event.value,
        )

    async def timeout_many(self, timers: list[tuple[str, int]]) -> list[Moved | None]:
        """Fire many fenced timeouts in one pipeline (the sweeper's batch); None: gone."""
        now = self.clock()
        reqs = await self._read_many([rid for rid, _ in timers]) if self.signer else []
        calls = [
            (keys.request_keys(rid), argv_of(Decision(event=Event.TIMEOUT, fence=f), now, signed))
            for (rid, f), signed in zip(
                timers, timeout_seals(self.signer, timers, reqs, now), strict=True
            )
        ]
        timeout = self._scripts["timeout"]
        replies = await run_many(self.redis, timeout, calls, self._in_flight, self._acks)
        out: list[Moved | None] = []
        for (rid, _), (status, raw, *rest) in zip(timers, replies, strict=True):
            if status == Reply.NOT_FOUND:
                out.append(None)
                continue
            h = reply(raw)
            if status == Reply.OK:  # logged as any other transition: operators alert on these
                log_moved(rid, Decision(event=Event.TIMEOUT), h, rest)
            out.append(Moved(from_hash(h), noop=status != Reply.OK, left=status == Reply.UNSIGNED))
        return out

    async def of_run(self, run_id: str) -> list[ActionRequest]:
        """The requests filed under a run, oldest first, read through the run's index
        (bot/store/run/run_requests.py), not every request since the run started: an entry
        naming no request, or one of another run, is left out."""
        out: list[ActionRequest] = []
        for rid in await run_requests.ids(self.redis, run_id):
            try:
                req = await self.get(rid)
            except NotFound:
                continue
            if req.run_id == run_id:
                out.append(req)
        return out

    async def list_pending(self, limit: int = 100) -> list[ActionRequest]:
        """Requests waiting for a person, oldest first."""
        ids: list[tuple[str, float]] = []
        for shard in range(keys.SHARDS):
            got = await self.redis.zrange(keys.pending(shard), 0, limit - 1, withscores=True)
            ids += cast(list[tuple[str, float]], got)
        ids.sort(key=lambda x: (x[1], x[0]))
        pipe = self.redis.pipeline(transaction=False)
        for rid, _ in ids[:limit]:
            pipe.hgetall(keys.request(rid))
        found = [h for h in await pipe.execute() if h]
        return [from_hash(h) for h in await self._terms.fill(found, skip_damaged=True)]

    async def ids_between(self, since_ms: int = 0, until_ms: int | None = None) -> list[str]:
        """Every request id created in the window, oldest first. A request waiting for
        review is indexed in `pending` only and enters `every` as it leaves review, so
        `pending` is read first: one that moves in between is then found in `every`."""
        found: dict[str, float] = {}
        top: int | str = "+inf" if until_ms is None else until_ms
        for shard in range(keys.SHARDS):
            for index in (keys.pending(shard), keys.every(shard)):
                got = await self.redis.zrangebyscore(index, since_ms, top, withscores=True)
                found.update(cast(list[tuple[str, float]], got))
        return [rid for rid, _ in sorted(found.items(), key=lambda x: (x[1], x[0]))]

    async def count(self) -> int:
        """How many requests the live store holds: the sizes of the indexes, not a read of
        every id (a request moving between `pending` and `every` meanwhile may count
        twice or not at all: a figure for a banner, not an audit)."""
        pipe = self.redis.pipeline(transaction=False)
        for shard in range(keys.SHARDS):
            pipe.zcard(keys.pending(shard))
            pipe.zcard(keys.every(shard))
        return sum(int(n) for n in await pipe.execute())

    async def wait(self, rid: str, timeout_s: float) -> ActionRequest:
        """Block (push, not polling) until the request leaves review or `timeout_s` passes."""
        return await wait_until(
            self.redis,
            (keys.request(rid), keys.wake(rid)),
            lambda: self.get(rid),
            lambda r: r.state != State.PENDING_REVIEW,
            timeout_s,
            flag=WATCHED,
        )


def _parsed(rid: str, h: dict[str, str]) -> ActionRequest:
    """The request in `h`, or StoreDamaged naming it: a hash written by hand (a field
    missing, a version that is no number) must read as a damaged record, not a crash."""
    try:
        return from_hash(h)
    except (KeyError, ValueError, TypeError) as exc:
        why = f"{type(exc).__name__}: {exc}"[:200]
        raise StoreDamaged(msg.RECORD_DAMAGED.format(id=rid, why=why)) from exc
