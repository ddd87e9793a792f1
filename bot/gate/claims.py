"""An executor's claim, checked first: the approval must carry serve's signature.

Every executor claims through `claim_checked` (the worker, the SDK in both modes and so
`hitl-bot mcp`, and `POST /v1/approvals/{id}/claim`). It reads the request with its
audit (one read script: one moment's view of both), checks its decision's seals against the
keys the executor trusts and that the history ends with that decision (bot/core/proof/seal.py),
and then, in one script each: claims it at the version it checked, or audits the refusal
(`forged_decision`) and raises ForgedDecision. Either script does nothing if the request
moved since the read (another executor's claim): it is read and checked again, and a
claim that lost the race is told so (AlreadyResolved), never called a forgery.
Anything that can write to the store can still write an approval; nothing it writes
makes an executor run the call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.config import Settings
from bot.core.models import SYSTEM, ActionRequest, Decision
from bot.core.policy import Policy
from bot.core.proof.fence import new_claim_token
from bot.core.proof.seal import FORGED, claim_problem, replay_problem
from bot.core.proposal import exempt
from bot.core.states import Event, State
from bot.errors import ForgedDecision, InvalidTransition
from bot.signing import PublicKeys, public_keys, require_public_keys
from bot.signing import messages as msg
from bot.store.requests import RequestStore

log = logging.getLogger(__name__)
RETRIES = 5  # the request moved between the check and the claim: check it again


def environment_keys() -> PublicKeys | None:
    """The public keys the environment names now (bot/signing/keys.py `public_keys`)."""
    return public_keys(Settings())


@dataclass(frozen=True)
class ClaimCheck:
    """What an executor trusts: serve's public keys and its own policy (which alone may
    exempt a call from review). With no keys, `lookup` is asked again at each claim (an
    executor started before serve made its key picks it up once there); still none:
    every claim is refused, saying how to set one. `reread`: the keys came from `lookup`'s
    source (the settings, not a caller's own list), so a key id they lack sends it there
    again: a key `hitl-bot keys rotate` made since is trusted without a restart."""

    keys: PublicKeys | None
    policy: Policy
    lookup: Callable[[], PublicKeys | None] = environment_keys
    reread: bool = False

    def problem(self, req: ActionRequest) -> str | None:
        free = exempt(self.policy, req.tool, req.args, req.risk)
        return claim_problem(req, self._verify, exempt=free)

    def _verify(self, key_id: str, data: bytes, signature: bytes) -> bool:
        # Asked only when there is a seal to check: a call this executor's own policy
        # exempts needs no key, anything else without one is refused (ConfigError).
        keys = self.keys if self.keys is not None else self.lookup()
        if self.reread and keys is not None and key_id not in keys.keys:
            # A key rotated in since this process started (`hitl-bot keys rotate` wrote
            # signing.pub): read again what it trusts, as a restart would.
            keys = self.lookup() or keys
        return require_public_keys(keys).verify(key_id, data, signature)


async def claim_checked(
    requests: RequestStore,
    rid: str,
    *,
    actor: str = SYSTEM,
    check: ClaimCheck,
    token: str | None = None,
) -> ActionRequest:
    """approved -> executing, exactly once, only for a decision serve signed: the request
    with its `fence`, which the executor hands its tool and shows in its report. A second
    claim raises AlreadyResolved; a forged or foreign-signed one ForgedDecision.

    `token`: the executor's claim token (bot/core/proof/fence.py). The same executor retrying
    with the same token (say after NotReplicated) gets the claim it holds back; None: one
    is made up, and such a claim cannot be retried."""
    token = token or new_claim_token()
    for _ in range(RETRIES):
        req, lines = await requests.with_audit(rid)
        problem = None
        if req.state in (State.APPROVED, State.AUTO_APPROVED):
            problem = check.problem(req) or replay_problem(req, lines)
        claim = Decision(event=Event.CLAIM, actor=actor, claim_token=token)
        if problem is not None:
            try:
                await requests.transition(rid, claim, expect_version=req.version, forged=problem)
            except ForgedDecision:
                # Refused and audited at the very version checked: a forgery, not a claim
                # that lost a race (the request moved on: it is read and checked again).
                extra = {"request_id": rid, "actor": actor, "why": problem, "tool": req.tool}
                log.error(FORGED, extra=extra)
                raise
            continue
        moved = await requests.transition(rid, claim, expect_version=req.version)
        if moved.noop:
            continue
        got = moved.request
        if (got.tool, got.args, got.payload_hash) != (req.tool, req.args, req.payload_hash):
            # Claimed at the version checked, yet not the call checked: never hand it out
            # (it stays executing, unrun, until its execution timeout fails it).
            why = "the claimed call is not the one whose decision was checked"
            log.error(FORGED, extra={"request_id": rid, "actor": actor, "why": why})
            raise ForgedDecision(msg.FORGED.format(id=rid, why=why), state=got.state.value)
        return got
    # Not a forgery: nothing was refused, the request only never stood still to be checked.
    raise InvalidTransition(msg.KEPT_MOVING.format(id=rid), event=Event.CLAIM.value)
