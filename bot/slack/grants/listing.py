"""Lists of live grants, as pure functions: `/hitl grants` and the App Home's section.
Each line names the grant, who granted it, the tool, the scope, what is left and when
it ends, with a Revoke button."""

from __future__ import annotations

from collections.abc import Sequence

from bot.slack.blocks import escape as esc
from bot.slack.blocks.escape import Block, section
from bot.slack.blocks.render import Rendered
from bot.slack.grants import messages as gmsg
from bot.slack.grants.card import ACTION_REVOKE, grant_line
from bot.store.grants import Held

MAX_SHOWN = 15


def _row(held: Held, now: int) -> Block:
    block = section(grant_line(held, now), block_id=f"hitl_grant_{held.grant.id}")
    revoke = esc.button(gmsg.BTN_REVOKE, ACTION_REVOKE, held.grant.id, style="danger")
    block["accessory"] = revoke
    return block


def rows(helds: Sequence[Held], now: int) -> list[Block]:
    blocks = [_row(h, now) for h in helds[:MAX_SHOWN]]
    if len(helds) > MAX_SHOWN:
        blocks.append(esc.context(esc.mrkdwn(f"+{len(helds) - MAX_SHOWN}")))
    return blocks


def grants_list(helds: Sequence[Held], now: int) -> Rendered:
    head = gmsg.LIST_HEAD.format(n=len(helds))
    if not helds:
        return Rendered(gmsg.LIST_NONE, [section(gmsg.LIST_NONE, block_id="hitl_grants_none")])
    text = "\n".join([head, *(grant_line(h, now) for h in helds[:MAX_SHOWN])])
    foot = esc.context(gmsg.LIST_USAGE, block_id="hitl_grants_usage")
    return Rendered(esc.truncate(text, 3000), [esc.header(head), *rows(helds, now), foot])


def home_blocks(helds: Sequence[Held], now: int) -> list[Block]:
    head = esc.header(gmsg.HOME_HEAD.format(n=len(helds)), "hitl_grants_head")
    if not helds:
        return [head, section(gmsg.LIST_NONE, block_id="hitl_grants_none")]
    return [head, *rows(helds, now)]
