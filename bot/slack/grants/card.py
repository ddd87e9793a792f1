"""What a standing approval adds to a card, as pure functions: the "Approve and allow
similar" button on a pending card whose tier allows grants, and on the card that made a
grant, its line (live, revoked, expired) with a Revoke button while it is live."""

from __future__ import annotations

from bot.core.grants import Bound, crosses_zero, scopes, standing_max
from bot.core.models import ActionRequest
from bot.core.policy import Policy
from bot.core.states import State
from bot.slack.blocks import escape as esc
from bot.slack.blocks.escape import Block, ButtonValue
from bot.slack.grants import messages as gmsg
from bot.store.grants import Held

ACTION_GRANT = "hitl_grant"
ACTION_REVOKE = "hitl_grant_revoke"
VIEW_GRANT = "hitl_grant_view"


def offers_grant(req: ActionRequest, policy: Policy) -> bool:
    # A proposal is approved only by choosing one of its calls: no grant stands for that.
    if req.candidates:
        return False
    return req.state == State.PENDING_REVIEW and req.quorum == 1 and bool(scopes(policy, req))


def grant_button(req: ActionRequest, policy: Policy) -> list[Block]:
    most = standing_max(policy, req.risk)
    if most is None or not offers_grant(req, policy):
        return []
    value = ButtonValue.encode(req.id, req.payload_hash)
    text = gmsg.BTN_GRANT.format(span=esc.duration(most))
    return [esc.actions([esc.button(text, ACTION_GRANT, value)], block_id="hitl_grant_actions")]


def ranges(bounds: dict[str, Bound]) -> list[str]:
    """How a grant's numeric bounds read, "amount from 0 to 50", those across zero said so."""
    out = []
    for name, b in sorted(bounds.items()):
        if b.kind == "range":
            line = gmsg.RANGE_LINE.format(name=esc.code(name), lo=b.lo, hi=b.hi)
            out.append(line + (gmsg.ACROSS_ZERO if crosses_zero(b) else ""))
    return out


def grant_line(held: Held, now: int) -> str:
    g = held.grant
    granter, tool = esc.user(g.granted_by), esc.code(g.tool)
    if held.live(now):
        shown = ranges(g.bounds)
        within = gmsg.LINE_RANGES.format(ranges="; ".join(shown)) if shown else ""
        return (
            gmsg.LINE_LIVE.format(
                gid=g.id,
                granter=granter,
                tool=tool,
                scope=gmsg.SCOPES[g.scope],
                until=esc.date(g.expires_at),
                left=held.left,
                uses=g.uses,
            )
            + within
        )
    if held.revoked_by is not None:
        why = gmsg.WHY_REVOKED.format(who=esc.user(held.revoked_by))
    elif now >= g.expires_at:
        why = gmsg.WHY_EXPIRED
    else:
        why = gmsg.WHY_USED_UP.format(uses=g.uses)
    return gmsg.LINE_ENDED.format(gid=g.id, granter=granter, why=why)


def grant_blocks(held: Held, now: int) -> list[Block]:
    blocks = [esc.context(grant_line(held, now), block_id="hitl_grant_line")]
    if held.live(now):
        revoke = esc.button(gmsg.BTN_REVOKE, ACTION_REVOKE, held.grant.id, style="danger")
        blocks.append(esc.actions([revoke], block_id="hitl_grant_revoke"))
    return blocks


def card_extra(req: ActionRequest, policy: Policy, held: Held | None, now: int) -> list[Block]:
    """What the card of `req` shows of standing approvals now."""
    if req.state == State.PENDING_REVIEW:
        return grant_button(req, policy)
    return grant_blocks(held, now) if held is not None else []
