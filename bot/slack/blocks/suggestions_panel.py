"""The policy suggestions in the operators' App Home panel: the summary serve's hourly
check kept (bot/core/suggestions/summary.py), each suggestion with what it changes, its
evidence and its effect, then the commands that write the fragment and apply it. A pure
function of the summary; nothing here applies anything. Every name, argument and value
came from an agent's calls, so each is escaped."""

from __future__ import annotations

from bot.core.suggestions.summary import BoundNote, Brief, Summary
from bot.slack.blocks import escape as esc
from bot.slack.blocks import home_messages as hmsg
from bot.slack.blocks.escape import Block, section

NAME_MAX = 80  # a tool, requester or argument as shown
VALUE_MAX = 40  # one value of a bound
BOUNDS_MAX = 800  # all of a suggestion's bounds


def _value(v: str | bool | int | float) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return esc.fit(str(v), VALUE_MAX)


def _bound(b: BoundNote) -> str:
    arg = esc.fit(b.argument, NAME_MAX)
    if b.low is not None and b.high is not None:
        return hmsg.SUGGEST_BOUND_RANGE.format(argument=arg, low=b.low, high=b.high)
    values = esc.join_fit([_value(v) for v in b.values], BOUNDS_MAX // 2)
    return hmsg.SUGGEST_BOUND_VALUES.format(argument=arg, values=values)


def _title(b: Brief) -> str:
    where = (
        hmsg.SUGGEST_STRICTER_ABOVE.format(
            argument=esc.fit(b.above[0], NAME_MAX), value=_value(b.above[1])
        )
        if b.above is not None
        else hmsg.SUGGEST_STRICTER_ALL
    )
    bounds = esc.join_fit([_bound(x) for x in b.bounds], BOUNDS_MAX) or hmsg.SUGGEST_NO_BOUND
    return hmsg.SUGGEST_TITLE[b.kind].format(
        tool=esc.inline_code(b.tool, NAME_MAX),
        requester=esc.user(esc.truncate(b.requester, NAME_MAX)),
        tier=b.tier.value,
        new=b.new_tier.value,
        bounds=bounds,
        where=where,
    )


def brief_text(n: int, b: Brief) -> str:
    """One suggestion: numbered, what it changes, its evidence and its effect."""
    lines = [f"*{n}.* {_title(b)}"]
    if b.loose:
        names = esc.join_fit([esc.fit(a, NAME_MAX) for a in b.loose], BOUNDS_MAX)
        lines.append(hmsg.SUGGEST_LOOSE.format(arguments=names))
    median = "-" if b.median_ms is None else esc.duration(b.median_ms)
    lines.append(
        hmsg.SUGGEST_EVIDENCE.format(
            approved=b.approved, median=median, rejected=b.rejected, edited=b.edited,
            timed_out=b.timed_out, requests=b.requests,
        )
    )  # fmt: skip
    moves = [
        hmsg.SUGGEST_TIER_MOVE.format(old=old.value, new=new.value, n=k) for old, new, k in b.tiers
    ]
    lines.append(
        hmsg.SUGGEST_EFFECT.format(
            moved=b.moved, tiers=", ".join(moves) or "-", to_auto=b.to_auto,
            to_person=b.to_person,
        )
    )  # fmt: skip
    return "\n".join(lines)


def suggestion_blocks(summary: Summary | None, *, check_s: float) -> list[Block]:
    """The heading, then: not computed yet; none found; or each suggestion shown, the
    commands, and when it was mined."""
    blocks = [esc.header(hmsg.SUGGEST_HEAD, "hitl_suggest_head")]
    # With the check off, a summary an earlier serve left is stale and never refreshed:
    # it is not shown as if it were this hour's.
    if summary is None or not check_s:
        text = (
            hmsg.SUGGEST_NOT_YET.format(every=esc.duration(int(check_s * 1000)))
            if check_s
            else hmsg.SUGGEST_OFF
        )
        return [*blocks, section(text, block_id="hitl_suggest_not_yet")]
    foot = hmsg.SUGGEST_FOOT.format(
        at=esc.date(summary.computed_at), n=summary.requests, total=summary.total,
        shown=len(summary.shown),
    )  # fmt: skip
    if not summary.shown:
        none = hmsg.SUGGEST_NONE.format(n=summary.requests)
        return [*blocks, section(none, block_id="hitl_suggest_none"), _foot(foot)]
    for i, b in enumerate(summary.shown, 1):
        blocks.append(section(brief_text(i, b), block_id=f"hitl_suggest_{i}"))
    commands = esc.code_block(esc.code_text("\n".join(summary.commands)))
    blocks.append(section(f"{hmsg.SUGGEST_HOW}\n{commands}", block_id="hitl_suggest_how"))
    return [*blocks, _foot(foot)]


def _foot(text: str) -> Block:
    return esc.context(text, block_id="hitl_suggest_foot")


def suggestions_failed() -> list[Block]:
    return [
        esc.header(hmsg.SUGGEST_HEAD, "hitl_suggest_head"),
        section(hmsg.SUGGEST_FAILED, block_id="hitl_suggest_failed"),
    ]
