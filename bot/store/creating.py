"""Creating a request: the call checked and proposed, its script's KEYS and ARGV built,
and the script's reply read back. Split in two (`prepare`, `finish`) so the worker's
free call can send the script without waiting for it (bot/store/free_call.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import orjson
from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from bot import messages as msg
from bot.clock import Clock, IdFactory
from bot.core.args.payload import canonical_args
from bot.core.args.schema import fit_problems
from bot.core.candidates import as_proposal, proposal_call
from bot.core.ids import keyed_request_id, new_request_id
from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import Policy
from bot.core.proof.fence import new_claim_token
from bot.core.proposal import propose
from bot.core.states import Event, State
from bot.db.replicas import ReplicaAcks
from bot.errors import IdempotencyConflict, PayloadError
from bot.signing import Signer
from bot.store import keys, tools
from bot.store.codec import created, from_hash, reply, split_terms, to_hash
from bot.store.figures.shadow import create_fields
from bot.store.replies import Reply
from bot.store.run import run_requests
from bot.store.transition_argv import exempted, log_created


@dataclass(frozen=True)
class Created:
    request: ActionRequest
    created: bool  # False: the idempotency key matched an existing request
    claimed: bool = False  # created exempt and claimed in the same step (`claim_as`)
    steered: bool = False  # nothing created: the run had a correction or a stop waiting


@dataclass(frozen=True)
class Prepared:
    """A create ready for its script (`RequestStore.prepare`)."""

    request: ActionRequest  # as proposed: what the script stores, before its reply
    needs_review: bool
    keys: list[str]
    argv: list[str | bytes | int]
    requester: str
    owner: str
    claim_as: str | None  # who claims it in the same step: only a call that needs no review
    token: str  # the claim token sent (bot/core/proof/fence.py)


class CreateOptions(TypedDict, total=False):
    """A create's optional parts: `RequestStore.create` says what each does."""

    run_id: str | None
    channel: str | None
    idempotency_key: str | None
    risk: RiskTier | None
    on_behalf_of: str | None
    args_schema: dict[str, Any] | None
    schema_by_worker: bool
    claim_as: str | None
    claim_token: str | None
    unless_steered: str | None
    owner: str | None
    candidates: Sequence[dict[str, Any]]
    trace: str | None


class Creating:
    """The create half of RequestStore (bot/store/requests.py), which sets these."""

    redis: Redis
    clock: Clock
    ids: IdFactory
    signer: Signer | None
    shadow: Policy | None
    guards_steering: bool
    create_loaded: bool
    _create: AsyncScript
    _scripts: dict[str, AsyncScript]
    _acks: ReplicaAcks
    _schemas: tools.SchemaCache

    async def prepare(
        self,
        policy: Policy,
        *,
        tool: str,
        args: dict[str, Any],
        requester: str,
        run_id: str | None = None,
        channel: str | None = None,
        idempotency_key: str | None = None,
        risk: RiskTier | None = None,
        on_behalf_of: str | None = None,
        args_schema: dict[str, Any] | None = None,
        schema_by_worker: bool = False,
        claim_as: str | None = None,
        claim_token: str | None = None,
        unless_steered: str | None = None,
        owner: str | None = None,
        candidates: Sequence[dict[str, Any]] = (),
        trace: str | None = None,
    ) -> Prepared:
        """`create` up to its script: the proposal checked, its KEYS and ARGV."""
        call, risk = (
            proposal_call(policy, tool, args, candidates, risk) if candidates else (args, risk)
        )
        if args_schema is not None:
            await self._fit(
                policy, requester, tool, args_schema, schema_by_worker, args, candidates
            )
        now = self.clock()
        owner = requester if owner is None else owner
        rid = (
            keyed_request_id(idempotency_key, owner)
            if idempotency_key
            else new_request_id(self.ids)
        )
        req, needs_review = propose(
            policy,
            request_id=rid,
            tool=tool,
            args=call,
            requester=requester,
            on_behalf_of=on_behalf_of,
            now=now,
            run_id=run_id,
            channel=channel,
            idempotency_key=idempotency_key,
            risk=risk,
            owner=owner,
        )
        req = as_proposal(req, candidates, needs_review=needs_review)
        records = [[Event.CREATE.value, "", State.PENDING_REVIEW.value, ""]]
        if not needs_review:
            req, approved = exempted(self.signer, req, now)
            records.append(approved)
        body, terms = split_terms(to_hash(req))
        body |= create_fields(self.shadow, req, needs_review, risk)
        if trace:  # the caller's traceparent: its span is the parent of the request's
            body["trace"] = trace
        argv: list[str | bytes | int] = [
            now,
            requester,
            json.dumps(records),
            orjson.dumps(body),
            terms,
        ]
        token = claim_token or new_claim_token()
        if claim_as and not needs_review:
            argv += [claim_as, token]
        if unless_steered is not None:
            if not self.guards_steering:
                raise ValueError("unless_steered needs one Redis, not a cluster")
            if unless_steered != run_id:
                raise ValueError("unless_steered names the call's own run")
        script_keys = keys.request_keys(rid)
        if run_id and self.guards_steering:  # one Redis: the script indexes it by run
            script_keys.append(keys.run_requests(run_id))
        elif run_id:
            # A cluster: the run's slot is not the request's, so the index is written in
            # a step of its own, before the script. A crash in between leaves an entry
            # readers skip, never a call its run's `show` cannot reach.
            await run_requests.index(self.redis, run_id, rid, now)
        if unless_steered is not None:
            script_keys += [
                keys.steering(unless_steered),
                keys.run(unless_steered),
                keys.run_waiting(unless_steered),
            ]
        claims = claim_as if claim_as and not needs_review else None
        return Prepared(req, needs_review, script_keys, argv, requester, owner, claims, token)

    @property
    def acks_needed(self) -> int:
        """Replicas every write waits for (HITL_REPLICA_ACKS); 0: the primary alone."""
        return self._acks.n

    @property
    def create_script(self) -> AsyncScript:
        return self._create

    @property
    def report_script(self) -> AsyncScript:
        return self._scripts["report"]

    def reconnected(self, conn: Any) -> None:
        """A connection sent creates on connected again: the script may be gone."""
        self.create_loaded = False

    async def create_again(self, prep: Prepared) -> Any:
        """`prep`'s script reply, sent through the usual path (loading the script)."""
        got = await self._acks.script(self._create, keys=prep.keys, args=prep.argv)
        self.create_loaded = True
        return got

    def finish(self, prep: Prepared, status: str, out: Any) -> Created:
        """What `create` answers for the script's reply to `prep`."""
        req, requester, owner = prep.request, prep.requester, prep.owner
        idempotency_key, claim_as = req.idempotency_key, prep.claim_as
        needs_review = prep.needs_review
        if status == Reply.STEERED:
            return Created(req, created=False, steered=True)
        stored = created(req, reply(out)) if status == Reply.OK else from_hash(reply(out))
        claimed = status == Reply.OK and stored.state == State.EXECUTING
        if status == Reply.OK:
            log_created(stored, requester, claim_as if claimed else None, exempt=not needs_review)
        if status != Reply.OK and stored.owner != owner:
            # Only a hash collision lands here: never show or hand out another's request.
            raise IdempotencyConflict(msg.IDEMPOTENCY_TAKEN.format(key=idempotency_key))
        if status == Reply.CONFLICT:
            raise IdempotencyConflict(
                msg.IDEMPOTENCY_CONFLICT.format(key=idempotency_key, existing=stored.payload_hash)
            )
        return Created(stored, created=status == Reply.OK, claimed=claimed)

    async def _fit(
        self,
        policy: Policy,
        requester: str,
        tool: str,
        args_schema: dict[str, Any],
        worker: bool,
        args: dict[str, Any],
        candidates: Sequence[dict[str, Any]],
    ) -> None:
        """Record the schema and check the call (or every candidate) against it."""
        # The call first: arguments refused (an integer JSON cannot carry, NaN) record no
        # schema either. Candidates were checked as the proposal was made.
        call = None if candidates else json.loads(canonical_args(args))
        validator = await self._schemas.checked(policy, requester, tool, args_schema, worker=worker)
        if call is not None and (found := fit_problems(validator, call)):
            raise PayloadError(msg.ARGS_DO_NOT_FIT.format(tool=tool, problems="; ".join(found)))
        for i, c in enumerate(candidates):
            if found := fit_problems(validator, json.loads(canonical_args(c))):
                why = "; ".join(found)
                raise PayloadError(
                    msg.CANDIDATE_DOES_NOT_FIT.format(n=i + 1, tool=tool, problems=why)
                )
