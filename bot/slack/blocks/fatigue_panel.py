"""The operators' panel on the App Home: the week's approval-fatigue figures by tier
(bot/core/fatigue.py), with each tier's busiest approvers. A pure function of the
figures; who sees it (the policy's `operators`) is decided by the caller."""

from __future__ import annotations

from bot.core.fatigue import READ_BASE_S, READ_PER_LINE_S, Figures, Report, TierFigures
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks import home_messages as hmsg
from bot.slack.blocks.escape import Block, section

APPROVERS_SHOWN = 3  # per tier; the report lists them all
NAME_MAX = 80  # an approver's name as shown (a Slack id is 11 characters)


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _who(name: str) -> str:
    return esc.user(esc.truncate(name, NAME_MAX))


def _approver(name: str, f: Figures) -> str:
    return hmsg.FATIGUE_APPROVER.format(
        who=_who(name), n=f.by_people, median=_secs(f.median), fast=f.too_fast
    )


def tier_text(tier: str, f: TierFigures) -> str:
    if not f.by_people:
        lines = [hmsg.FATIGUE_TIER_POLICY_ONLY.format(tier=esc.mrkdwn(tier))]
    else:
        lines = [
            hmsg.FATIGUE_TIER.format(
                tier=esc.mrkdwn(tier),
                n=f.by_people,
                approved=_share(f.rate("approved")),
                rejected=_share(f.rate("rejected")),
            )
        ]
        lines.append(
            hmsg.FATIGUE_TIMES.format(
                median=_secs(f.median), p90=_secs(f.p90), fast=f.too_fast, n=f.by_people
            )
        )
    if (top := f.busiest) is not None:
        lines.append(hmsg.FATIGUE_BUSIEST.format(who=_who(top[0]), share=_share(top[1])))
    o = f.outcomes
    if o["auto_approved"] or o["auto_rejected"] or o["no_review"]:
        lines.append(
            hmsg.FATIGUE_POLICY.format(
                auto_approved=o["auto_approved"],
                auto_rejected=o["auto_rejected"],
                none=o["no_review"],
            )
        )
    ranked = sorted(f.approvers.items(), key=lambda kv: (-kv[1].by_people, kv[0]))
    lines += [_approver(name, a) for name, a in ranked[:APPROVERS_SHOWN]]
    if len(ranked) > APPROVERS_SHOWN:
        lines.append(smsg.AND_MORE.format(n=len(ranked) - APPROVERS_SHOWN))
    return "\n".join(lines)


def fatigue_blocks(report: Report) -> list[Block]:
    """The heading, a section a tier (four at most), and how "too fast" is measured."""
    blocks = [esc.header(hmsg.FATIGUE_HEAD, "hitl_fatigue_head")]
    if not report.tiers:
        return [*blocks, section(hmsg.FATIGUE_NONE, block_id="hitl_fatigue_none")]
    for tier, f in report.tiers.items():
        blocks.append(section(tier_text(tier, f), block_id=f"hitl_fatigue_{tier}"))
    foot = hmsg.FATIGUE_FOOT.format(base=READ_BASE_S, per_line=READ_PER_LINE_S)
    return [*blocks, esc.context(foot, block_id="hitl_fatigue_foot")]
