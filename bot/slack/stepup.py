"""Step-up in Slack: an approval on a tier with `step_up` becomes a private link to the
approver's passkey page (bot/passkey) instead of an approval; and `/hitl passkey`, which
enrolls, lists and removes the person's own passkeys."""

from __future__ import annotations

from bot.core.deciders import Verdict, who_may_decide
from bot.core.models import Decision, RiskTier
from bot.core.states import Event
from bot.core.stepup import may_ask, needs_step_up
from bot.gate import stepup
from bot.gate.runtime import Runtime
from bot.slack import stepup_messages as msg
from bot.slack.blocks import escape as esc
from bot.store.codec import from_hash


async def guard(
    rt: Runtime,
    h: dict[str, str],
    d: Decision,
    *,
    groups: tuple[str, ...],
    foreign: bool,
) -> Decision:
    """`d` as the store may take it without a passkey. An approval on a step-up tier that
    may be confirmed raises StepUpNeeded (with the approver's link, or why they have
    none); one that may not is turned into an edit without arguments, which the store
    refuses, and audits, for what is wrong with it (decided already, expired, changed,
    not theirs), and which can never approve."""
    tier = rt.policy.tiers.get(RiskTier(h.get("risk") or RiskTier.CRITICAL.value))
    if not needs_step_up(tier.step_up if tier else None, d):
        return d
    if d.event == Event.EDIT_AND_APPROVE and d.new_args is None:
        return d  # the Edit dialog's probe: refused last by the store, it never approves
    req, now = from_hash(h), rt.clock()
    verdict = who_may_decide(req, d.actor, groups, event=d.event, foreign=foreign)
    if not may_ask(req, d, now) or verdict != Verdict.MAY:
        return d.model_copy(update={"event": Event.EDIT_AND_APPROVE, "new_args": None})
    binding = await stepup.offer(rt.passkeys, req, d, d.actor, now=now)
    if binding is None:
        text = msg.STEP_UP_NONE.format(id=req.id)
        raise stepup.StepUpNeeded(text, url=None, expires_at=None)
    public = rt.settings.hitl_public_url or ""
    url = stepup.confirm_url(public, binding.token)
    until = esc.date(binding.expires_at, "{time}")
    text = msg.STEP_UP_LINK.format(id=req.id, url=url, until=until)
    raise stepup.StepUpNeeded(text, url=url, expires_at=binding.expires_at)


def plain(exc: stepup.StepUpNeeded) -> str:
    """The step-up answer where Slack shows plain text only (a modal's error)."""
    if exc.url is None:
        return msg.STEP_UP_NONE_PLAIN
    return msg.STEP_UP_LINK_PLAIN.format(url=exc.url)


async def passkey_command(rt: Runtime, user: str, rest: str) -> str:
    """`/hitl passkey`: a one-time enrollment link and the person's passkeys;
    `/hitl passkey remove ID`: remove one of their own."""
    verb, _, arg = rest.partition(" ")
    if verb.lower() == "remove" and arg.strip():
        gone = await rt.passkeys.remove(user, arg.strip(), by=user)
        template = msg.PASSKEY_REMOVED if gone else msg.PASSKEY_NOT_YOURS
        return template.format(id=esc.mrkdwn(arg.strip()))
    if not rt.settings.hitl_public_url:
        return msg.PASSKEY_OFF
    mine = await rt.passkeys.of(user)
    items = ", ".join(msg.PASSKEY_ITEM.format(id=c.id, at=esc.date(c.created_at)) for c in mine)
    listing = msg.PASSKEY_LIST.format(items=items) if mine else msg.PASSKEY_NONE_YET
    e = await rt.passkeys.issue_enrollment(user)
    url = stepup.enroll_url(rt.settings.hitl_public_url, e.token)
    until = esc.date(e.expires_at, "{time}")
    return msg.PASSKEY_ENROLL.format(url=url, until=until, listing=listing)
