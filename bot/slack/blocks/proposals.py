"""A proposal's card (bot/core/candidates.py): every candidate call in full, each with a
Choose button, and Reject. Pure: render.py draws these blocks for a request with
candidates; the clicks are bot/slack/listeners/choose.py's.

Each Choose button binds the request, the proposal's hash (what the person saw: every
candidate, in order) and the candidate's index, so a click can only approve that one.
"""

from __future__ import annotations

import re

from bot.core.candidates import candidate_hashes, chosen, shown_hash
from bot.core.invisible import hidden_in
from bot.core.models import ActionRequest, RiskTier
from bot.core.states import State
from bot.slack import messages as smsg
from bot.slack.blocks import escape as esc
from bot.slack.blocks.call import args_blocks
from bot.slack.blocks.escape import Block, ButtonValue, section

HIGH = frozenset({RiskTier.HIGH, RiskTier.CRITICAL})
ACTION_CHOOSE = "hitl_choose"  # one action id per button: ACTION_CHOOSE_<index>
_INDEX = re.compile(r"0|[1-9][0-9]{0,5}")
CANDIDATE_BLOCKS = 40  # of a card's 50: the head, details, buttons and foot keep the rest


def choose_value(req: ActionRequest, index: int) -> str:
    return f"{index} {ButtonValue.encode(req.id, shown_hash(req))}"


def parse_choice(value: str) -> tuple[int, str, str]:
    """(index, request id, proposal hash) of a Choose button's value; ValueError if bad."""
    index, _, rest = value.partition(" ")
    rid, phash = ButtonValue.decode(rest)
    if not _INDEX.fullmatch(index):  # as `choose_value` writes one: `int` takes "-1", "+0"
        raise ValueError("not an index a Choose button carries")
    return int(index), rid, phash


def proposal_blocks(req: ActionRequest) -> list[Block]:
    """Each candidate: a heading (with the votes it has, or that it was chosen), its
    Choose button while the proposal waits, and every argument as JSON."""
    intro = smsg.PROPOSAL_INTRO.format(tool=esc.inline_code(req.tool, 300), n=len(req.candidates))
    blocks: list[Block] = [section(intro, block_id="hitl_call")]
    if hidden_in(list(req.candidates)):
        blocks.insert(0, esc.context(smsg.HIDDEN_CHARS_WARNING, block_id="hitl_hidden"))
    pick = chosen(req)
    hashes = candidate_hashes(req.tool, req.candidates)
    each = max(2, CANDIDATE_BLOCKS // len(req.candidates))
    for i, args in enumerate(req.candidates):
        head = smsg.CANDIDATE_HEAD.format(n=i + 1, hash=hashes[i][:12])
        if i == pick and req.state == State.PENDING_REVIEW:
            head += smsg.CANDIDATE_VOTES.format(approvals=_votes(req))
        elif i == pick:
            head += smsg.CANDIDATE_CHOSEN
        button = None
        if req.state == State.PENDING_REVIEW:
            button = esc.button(
                smsg.BTN_CHOOSE.format(n=i + 1),
                f"{ACTION_CHOOSE}_{i}",
                choose_value(req, i),
                confirm=_confirm(req, i) if req.risk in HIGH else None,
            )
        blocks.append(section(head, accessory=button, block_id=f"hitl_cand_{i}"))
        blocks += _renamed(args_blocks(args, each - 1), i)
    return blocks


def reject_row(req: ActionRequest, reject_action: str) -> Block:
    value = ButtonValue.encode(req.id, shown_hash(req))
    button = esc.button(smsg.BTN_REJECT, reject_action, value, style="danger")
    return esc.actions([button], block_id="hitl_actions")


def _confirm(req: ActionRequest, i: int) -> Block:
    """As Approve asks on a high or critical card: the choice runs that call."""
    title = smsg.CONFIRM_TITLE.format(risk=req.risk.value.upper())
    text = smsg.CONFIRM_CHOICE.format(n=i + 1, tool=esc.truncate(req.tool, 80))
    return esc.confirm(title, text, smsg.BTN_CHOOSE.format(n=i + 1), smsg.BTN_BACK)


def _votes(req: ActionRequest) -> str:
    names = esc.join_fit([esc.user(a.actor) for a in req.approvals], 800)
    count = smsg.N_OF.format(n=len(req.approvals), total=req.quorum)
    return f"{count}: {names}" if names else count


def _renamed(blocks: list[Block], i: int) -> list[Block]:
    """Block ids are unique on a card: each candidate's listing gets its own."""
    for j, b in enumerate(blocks):
        b["block_id"] = f"hitl_cand_{i}_args_{j}"
    return blocks
