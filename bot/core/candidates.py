"""Proposals: one request offering several candidate calls of one tool, a person chooses.

While it waits, a proposal runs nothing: its `args` are empty and its `payload_hash` is
the proposal's own hash (of the tool and every candidate's hash, under its own domain),
so no approval of it could be claimed (the claim checks that the args hash to the
payload hash). Choosing a candidate is an edit-and-approve to exactly that candidate:
the store and the machine take only a candidate's hash, the chosen call becomes the
request's args and payload hash, and the seal covers it. With a quorum, choices of the
same candidate add up; a choice of another candidate starts the count again on it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from bot import messages as msg
from bot.core.args.payload import args_problem, payload_hash
from bot.core.models import ActionRequest, RiskTier
from bot.core.policy import TIER_ORDER, Policy
from bot.core.states import State
from bot.errors import PayloadError

MAX_CANDIDATES = 5  # each shown in full on one card of at most 50 blocks
MIN_CANDIDATES = 2  # one candidate is an ordinary call: file it with `args`
DOMAIN = "hitl-proposal/1"  # so a proposal's hash is never a call's


def candidates_problem(tool: str, candidates: Sequence[Any]) -> str | None:
    """Why these candidates cannot be proposed, or None."""
    if not MIN_CANDIDATES <= len(candidates) <= MAX_CANDIDATES:
        return msg.CANDIDATES_COUNT.format(
            n=len(candidates), min=MIN_CANDIDATES, max=MAX_CANDIDATES
        )
    seen: set[str] = set()
    for i, c in enumerate(candidates):
        if not isinstance(c, dict):
            return msg.CANDIDATE_NOT_OBJECT.format(n=i + 1)
        if (problem := args_problem(c)) is not None:
            return msg.CANDIDATE_PROBLEM.format(n=i + 1, problem=problem)
        h = payload_hash(tool, c)
        if h in seen:
            return msg.CANDIDATE_TWICE.format(n=i + 1)
        seen.add(h)
    return None


def candidate_hashes(tool: str, candidates: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(payload_hash(tool, c) for c in candidates)


def proposal_hash(tool: str, candidates: Sequence[dict[str, Any]]) -> str:
    """What a person deciding on the proposal saw: the tool and every candidate, in order."""
    body = json.dumps([DOMAIN, tool, list(candidate_hashes(tool, candidates))])
    return hashlib.sha256(body.encode()).hexdigest()


def as_proposal(
    req: ActionRequest, candidates: Sequence[dict[str, Any]], *, needs_review: bool
) -> ActionRequest:
    """`req` (made for empty args) turned into the proposal of `candidates` (none: `req`
    as it is). Nobody choosing in time never approves one: the default is to reject,
    whatever the tier's. A tool the policy lets run unreviewed has nobody to choose."""
    if not candidates:
        return req
    if not needs_review:
        raise PayloadError(msg.PROPOSAL_NEEDS_REVIEW.format(tool=req.tool))
    return req.model_copy(
        update={
            "args": {},
            "payload_hash": proposal_hash(req.tool, candidates),
            "candidates": tuple(candidates),
            "on_exhausted": State.AUTO_REJECTED,
        }
    )


def shown_hash(req: ActionRequest) -> str:
    """The hash a person deciding `req` must have seen: a proposal's own, kept as the
    `original_hash` once a candidate was chosen; else the call's."""
    if req.candidates and req.original_hash:
        return req.original_hash
    return req.payload_hash


def chosen(req: ActionRequest) -> int | None:
    """The index of the candidate chosen so far (None: none yet, or not a proposal)."""
    if not req.candidates or not req.original_hash:
        return None
    hashes = candidate_hashes(req.tool, req.candidates)
    return hashes.index(req.payload_hash) if req.payload_hash in hashes else None


def proposal_call(
    policy: Policy,
    tool: str,
    args: dict[str, Any],
    candidates: Sequence[Any],
    risk: RiskTier | None,
) -> tuple[dict[str, Any], RiskTier | None]:
    """The candidate whose tier the proposal is reviewed at, the highest any reaches
    (any may be the one that runs), and `risk`. Raises PayloadError for a proposal that
    cannot be made (args as well, too few or too many candidates, a repeated one)."""
    if args:
        raise PayloadError(msg.ARGS_OR_CANDIDATES)
    if (problem := candidates_problem(tool, candidates)) is not None:
        raise PayloadError(problem)
    top = max(candidates, key=lambda c: TIER_ORDER.index(policy.classify(tool, c).tier))
    return top, risk
