"""The lists a person reads: what waits for them, the policy, a request's audit. The App
Home shows them as blocks (`pending_blocks`, ...), the slash commands as messages
(`pending_list`, ...). Pure functions, like the rest of Block Kit here."""

from __future__ import annotations

from bot import messages as msg
from bot.core.models import ActionRequest, AuditEntry, RiskTier
from bot.core.pagers import pages
from bot.core.policy import TIER_ORDER, Assignees, Policy, TierPolicy
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks.escape import Block, ButtonValue, section
from bot.slack.blocks.render import (
    ACTION_VIEW,
    Rendered,
    risk_word,
    waiting_for,
)


def pending_blocks(
    reqs: list[ActionRequest], *, now_ms: int, max_blocks: int, title: str | None = None
) -> list[Block]:
    """`title`: the list's heading (default: how many requests are pending)."""
    head = smsg.PENDING_HEAD.format(n=len(reqs)) if title is None else title
    blocks = [esc.header(head, "hitl_pending_head")]
    if not reqs:
        return [*blocks, section(smsg.PENDING_NONE, block_id="hitl_pending_none")]
    shown = reqs if len(reqs) < max_blocks else reqs[: max_blocks - 2]
    for req in shown:
        view = esc.button(smsg.BTN_VIEW, ACTION_VIEW, ButtonValue.encode(req.id, req.payload_hash))
        blocks.append(section(_pending_line(req, now_ms), accessory=view))
    if len(shown) < len(reqs):
        blocks.append(esc.context(smsg.AND_MORE.format(n=len(reqs) - len(shown))))
    return blocks


def _pending_line(req: ActionRequest, now_ms: int) -> str:
    lines = [f"{risk_word(req)} {esc.code(req.tool)} · {smsg.F_REQUEST} {esc.code(req.id)}"]
    level = smsg.N_OF.format(n=req.level + 1, total=max(len(req.levels), 1))
    approvals = smsg.N_OF.format(n=len(req.approvals), total=req.quorum)
    lines.append(smsg.PENDING_LINE.format(level=level, who=waiting_for(req), approvals=approvals))
    if req.expires_at is not None:
        left = req.expires_at - now_ms
        when = (smsg.PENDING_LEFT if left > 0 else smsg.PENDING_OVERDUE).format(
            d=esc.duration(left)
        )
        label = smsg.DEADLINE_LABELS["pending_review"]
        lines.append(f"{label} {esc.date(req.expires_at)} ({when})")
    return "\n".join(lines)


def policy_blocks(policy: Policy, *, max_blocks: int) -> list[Block]:
    blocks = [esc.header(smsg.POLICY_HEAD, "hitl_policy_head")]
    for tier in TIER_ORDER:
        blocks.append(section(_tier_text(tier, policy.tiers[tier]), block_id=f"hitl_tier_{tier}"))
    lines = []
    for name, tp in sorted(policy.tools.items()):
        line = f"{esc.code(name)} → {(tp.tier or policy.default_tier).value}"
        line += f", {smsg.POLICY_NO_REVIEW}" if tp.review == "none" else ""
        rules = [f"{esc.code(r.condition)} → {r.tier.value}" for r in tp.rules]
        lines.append(esc.truncate(line + (f"; {', '.join(rules)}" if rules else ""), 1000))
    for i, part in enumerate(esc.pack([f"*{smsg.F_TOOLS}*", *lines])) if lines else ():
        blocks.append(section(part, block_id=f"hitl_tools_{i}"))
    foot = smsg.POLICY_FOOT.format(
        default=policy.default_tier.value, claim=esc.duration(policy.claim_timeout),
        execution=esc.duration(policy.execution_timeout),
    )  # fmt: skip
    blocks.append(esc.context(foot, block_id="hitl_policy_foot"))
    return esc.cap(blocks, max_blocks, smsg.BLOCKS_CUT)


def _tier_text(tier: RiskTier, tp: TierPolicy) -> str:
    chain = [f"{i}. {_level(a, tp)}" for i, a in enumerate((tp.reviewers, *tp.escalation), 1)]
    # the principals a request of this tier carries (what the machine checks)
    firsts = tp.first_deciders()
    approvers = (
        smsg.ANYONE_ELIGIBLE
        if "*" in firsts
        else esc.join_fit([esc.principal(a) for a in firsts], 400) or smsg.NOBODY
    )
    return "\n".join([
        f"*{smsg.RISK_EMOJI[tier.value]} {tier.value.upper()}* · "
        + smsg.POLICY_REVIEW.format(d=esc.duration(tp.review_timeout)),
        f"*{smsg.F_CHAIN}* {esc.join_fit(chain, 2000, ' → ')}",
        f"*{smsg.F_EXHAUSTED}* {tp.on_exhausted.value}",
        smsg.POLICY_APPROVALS.format(
            n=tp.approvals_required, approvals=msg.plural(tp.approvals_required, "approval"),
            who=approvers, self=smsg.POLICY_YES_NO[tp.self_approval],
            edit=smsg.POLICY_YES_NO[tp.allow_edit],
        ),
    ])  # fmt: skip


def _level(a: Assignees, tp: TierPolicy) -> str:
    items = [esc.principal(n) for n in (*a.users, *a.groups, *a.channels)]
    items += [smsg.LEVEL_ONCALL.format(name=esc.code(a.oncall))] if a.oncall else []
    items += [smsg.LEVEL_PAGER] if pages(a) else []
    return f"{esc.join_fit(items, 300)} ({esc.duration(a.timeout or tp.review_timeout)})"


def audit_blocks(entries: list[AuditEntry]) -> list[Block]:
    blocks = [esc.header(smsg.AUDIT_HEAD.format(n=len(entries)), "hitl_audit_head")]
    parts = esc.pack([_audit_line(e) for e in entries]) if entries else [smsg.AUDIT_EMPTY]
    room = esc.MESSAGE_BLOCKS - 2
    blocks += [section(p, block_id=f"hitl_audit_{i}") for i, p in enumerate(parts[:room])]
    if len(parts) > room:
        blocks.append(esc.context(smsg.AUDIT_CUT))
    return blocks


def _audit_line(e: AuditEntry) -> str:
    move = f"{e.from_state or '∅'} → {e.to_state}" if e.to_state else (e.from_state or "")
    line = f"`{e.seq}` {esc.date(e.at, '{date_short} {time_secs}')} *{esc.fit(e.event, 50)}* "
    line += esc.fit(move, 100) + (f" {smsg.AUDIT_REFUSED}" if e.kind == "refused" else "")
    line += f" · {esc.user(esc.truncate(e.actor, 100))}"
    line += f" · {esc.inline_code(e.reason_code, 100)}" if e.reason_code else ""
    line += f" — {esc.fit(e.text, 300)}" if e.text else ""
    return line + (f" · `{e.payload_hash[:12]}`" if e.payload_hash else "")


def pending_list(reqs: list[ActionRequest], *, now_ms: int) -> Rendered:
    text = smsg.PENDING_HEAD.format(n=len(reqs)) if reqs else smsg.PENDING_NONE
    return Rendered(text, pending_blocks(reqs, now_ms=now_ms, max_blocks=esc.MESSAGE_BLOCKS))


def policy_summary(policy: Policy) -> Rendered:
    tiers = ", ".join(
        f"{t.value} {esc.duration(policy.tiers[t].review_timeout)}" for t in TIER_ORDER
    )
    text = smsg.POLICY_FALLBACK.format(tiers=tiers, tools=len(policy.tools))
    return Rendered(text, policy_blocks(policy, max_blocks=esc.MESSAGE_BLOCKS))


def audit_text(entries: list[AuditEntry]) -> Rendered:
    return Rendered(smsg.AUDIT_HEAD.format(n=len(entries)), audit_blocks(entries))
